import { asArray, asRecord, parseRecord, asString, type ChunkDelta, type SseMessage, type StreamDecoder, type StreamEvent } from "../types";
import { geminiToolCall, geminiUsage, normalizeGeminiFinish } from "./response";

/** streamGenerateContent?alt=sse: each event is a partial GenerateContentResponse; no end marker. */
export function createGeminiStreamDecoder(): StreamDecoder {
  let toolCount = 0;
  let first = true;
  return {
    decode(message: SseMessage, out: StreamEvent[]): void {
      const ev = parseRecord(message.data);
      if (!ev) return;
      const err = asRecord(ev.error);
      if (err) {
        out.push({ type: "error", code: asString(err.status), message: asString(err.message) });
        return;
      }
      const candidate = asRecord(asArray(ev.candidates)[0]);
      const delta: ChunkDelta = {};
      if (first) {
        delta.role = "assistant";
        first = false;
      }
      let content = false;
      for (const p of asArray(asRecord(candidate?.content)?.parts)) {
        const part = asRecord(p);
        if (!part) continue;
        const t = asString(part.text);
        if (t) {
          content = true;
          if (part.thought === true) delta.reasoning = (delta.reasoning ?? "") + t;
          else delta.content = (delta.content ?? "") + t;
        }
        const fc = asRecord(part.functionCall);
        if (fc) {
          content = true;
          const index = toolCount++;
          (delta.tool_calls ??= []).push({ index, ...geminiToolCall(fc, index) });
        }
      }
      const native = asString(candidate?.finishReason);
      const blocked = !candidate ? asString(asRecord(ev.promptFeedback)?.blockReason) : null;
      const finish = blocked ? "content_filter" : normalizeGeminiFinish(native, toolCount > 0);
      if (content || finish || delta.role) {
        out.push({
          type: "chunk",
          content,
          choices: [{ index: 0, delta, finish_reason: finish, native_finish_reason: blocked ?? native }],
        });
      }
      const usage = geminiUsage(ev.usageMetadata);
      if (usage) out.push({ type: "usage", usage });
      if (native || blocked) out.push({ type: "done" });
    },
  };
}
