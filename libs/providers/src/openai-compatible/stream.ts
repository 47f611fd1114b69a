import { normalizeOpenAiFinish } from "../message-content";
import {
  asArray,
  asRecord,
  asString,
  type ChunkChoice,
  type ChunkDelta,
  type SseMessage,
  type StreamDecoder,
  type StreamEvent,
  type ToolCallDelta,
} from "../types";
import { parseOpenAiUsage } from "./response";

function toolCallDeltas(v: unknown): ToolCallDelta[] | undefined {
  const list = asArray(v);
  if (!list.length) return undefined;
  const out: ToolCallDelta[] = [];
  list.forEach((raw, i) => {
    const c = asRecord(raw);
    if (!c) return;
    const d: ToolCallDelta = { index: typeof c.index === "number" ? c.index : i };
    const id = asString(c.id);
    if (id) d.id = id;
    if (c.type === "function") d.type = "function";
    const fn = asRecord(c.function);
    if (fn) {
      d.function = {};
      const name = asString(fn.name);
      if (name) d.function.name = name;
      const args = asString(fn.arguments);
      if (args !== null) d.function.arguments = args;
    }
    out.push(d);
  });
  return out.length ? out : undefined;
}

/** OpenAI-compatible SSE: `data: <chunk>` lines and a final `data: [DONE]`. */
export function createOpenAiStreamDecoder(): StreamDecoder {
  return {
    decode(message: SseMessage, out: StreamEvent[]): void {
      if (message.data === "[DONE]") {
        out.push({ type: "done" });
        return;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(message.data);
      } catch {
        return; // a stray non-JSON line is not a chunk
      }
      const chunk = asRecord(parsed);
      if (!chunk) return;
      const err = asRecord(chunk.error);
      if (err) {
        out.push({ type: "error", code: asString(err.code) ?? asString(err.type), message: asString(err.message) });
        return;
      }
      const rawChoices = asArray(chunk.choices);
      if (rawChoices.length) {
        let content = false;
        const choices: ChunkChoice[] = rawChoices.map((raw, i) => {
          const c = asRecord(raw) ?? {};
          const d = asRecord(c.delta) ?? {};
          const delta: ChunkDelta = {};
          if (d.role === "assistant") delta.role = "assistant";
          const text = asString(d.content);
          if (text !== null) delta.content = text;
          const reasoning = asString(d.reasoning_content) ?? asString(d.reasoning);
          if (reasoning) delta.reasoning = reasoning;
          const tools = toolCallDeltas(d.tool_calls);
          if (tools) delta.tool_calls = tools;
          if (text || reasoning || tools) content = true;
          const native = asString(c.finish_reason);
          return {
            index: typeof c.index === "number" ? c.index : i,
            delta,
            finish_reason: normalizeOpenAiFinish(native),
            native_finish_reason: native,
          };
        });
        out.push({ type: "chunk", choices, content });
      }
      // Groq reports stream usage under x_groq.
      const usage = parseOpenAiUsage(chunk.usage ?? asRecord(chunk.x_groq)?.usage);
      if (usage) out.push({ type: "usage", usage });
    },
  };
}
