import { asArray, asNumber, asRecord, asString, parseRecord, type ChunkDelta, type Completion, type CompletionMessage, type FinishReason, type SseMessage, type StreamDecoder, type StreamEvent, type TokenUsage, type ToolCall } from "../types";

/** Converse stop reasons → normalized finish reasons. */
export function normalizeConverseStop(native: string | null): FinishReason | null {
  switch (native) {
    case null:
      return null;
    case "end_turn":
    case "stop_sequence":
      return "stop";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "content_filtered":
    case "guardrail_intervened":
      return "content_filter";
    default:
      return "stop";
  }
}

/**
 * Converse usage: `inputTokens` leaves out prompt tokens read from or written to the cache, which
 * come apart (`cacheReadInputTokens`, `cacheWriteInputTokens`, five-minute writes).
 */
export function converseUsage(u: Record<string, unknown> | null): TokenUsage {
  const cached = asNumber(u?.cacheReadInputTokens);
  const written = asNumber(u?.cacheWriteInputTokens);
  const usage: TokenUsage = { prompt: asNumber(u?.inputTokens) + cached + written, completion: asNumber(u?.outputTokens), cached, reasoning: 0 };
  if (written > 0) usage.cacheWrite5m = written;
  return usage;
}

/** A Converse answer: `output.message.content` blocks (text, toolUse, reasoningContent), `stopReason`, `usage`. */
export function parseConverseCompletion(body: unknown): Completion {
  const b = asRecord(body);
  const message = asRecord(asRecord(b?.output)?.message);
  if (!message) throw new Error("a Converse answer without output.message");
  let text = "";
  let reasoning = "";
  const toolCalls: ToolCall[] = [];
  for (const raw of asArray(message.content)) {
    const block = asRecord(raw);
    if (!block) continue;
    if (typeof block.text === "string") text += block.text;
    const toolUse = asRecord(block.toolUse);
    if (toolUse) {
      toolCalls.push({ id: asString(toolUse.toolUseId) ?? "", type: "function", function: { name: asString(toolUse.name) ?? "", arguments: JSON.stringify(toolUse.input ?? {}) } });
    }
    const thought = asString(asRecord(asRecord(block.reasoningContent)?.reasoningText)?.text);
    if (thought) reasoning += thought;
  }
  const out: CompletionMessage = { role: "assistant", content: text || (toolCalls.length ? null : "") };
  if (reasoning) out.reasoning = reasoning;
  if (toolCalls.length) out.tool_calls = toolCalls;
  const native = asString(b?.stopReason);
  return {
    choices: [{ index: 0, message: out, finish_reason: normalizeConverseStop(native), native_finish_reason: native }],
    usage: b?.usage ? converseUsage(asRecord(b.usage)) : null,
  };
}

const chunk = (delta: ChunkDelta, content: boolean): StreamEvent => ({ type: "chunk", content, choices: [{ index: 0, delta, finish_reason: null, native_finish_reason: null }] });

/**
 * ConverseStream events → chunks: messageStart, contentBlockStart (a tool call's id and name),
 * contentBlockDelta (text, tool input JSON, reasoning), contentBlockStop, messageStop (the stop
 * reason), metadata (usage; the last event). Exceptions reach the decoder as `error` events.
 */
export function createConverseStreamDecoder(): StreamDecoder {
  // Content block index → the OpenAI tool-call index of a toolUse block.
  const toolIndexOfBlock = new Map<number, number>();
  return {
    decode(message: SseMessage, out: StreamEvent[]): void {
      const ev = parseRecord(message.data);
      if (!ev) return;
      switch (message.event) {
        case "messageStart":
          out.push(chunk({ role: "assistant" }, false));
          return;
        case "contentBlockStart": {
          const toolUse = asRecord(asRecord(ev.start)?.toolUse);
          if (!toolUse) return;
          const index = toolIndexOfBlock.size;
          toolIndexOfBlock.set(asNumber(ev.contentBlockIndex), index);
          out.push(chunk({ tool_calls: [{ index, id: asString(toolUse.toolUseId) ?? "", type: "function", function: { name: asString(toolUse.name) ?? "", arguments: "" } }] }, true));
          return;
        }
        case "contentBlockDelta": {
          const delta = asRecord(ev.delta);
          const text = asString(delta?.text);
          if (text) out.push(chunk({ content: text }, true));
          const input = asString(asRecord(delta?.toolUse)?.input);
          if (input) out.push(chunk({ tool_calls: [{ index: toolIndexOfBlock.get(asNumber(ev.contentBlockIndex)) ?? 0, function: { arguments: input } }] }, true));
          const thought = asString(asRecord(delta?.reasoningContent)?.text);
          if (thought) out.push(chunk({ reasoning: thought }, true));
          return;
        }
        case "messageStop": {
          const native = asString(ev.stopReason);
          out.push({ type: "chunk", content: false, choices: [{ index: 0, delta: {}, finish_reason: normalizeConverseStop(native), native_finish_reason: native }] });
          return;
        }
        case "metadata": {
          const usage = asRecord(ev.usage);
          if (usage) out.push({ type: "usage", usage: converseUsage(usage) });
          out.push({ type: "done" });
          return;
        }
        case "error": {
          const err = asRecord(ev.error);
          out.push({ type: "error", code: asString(err?.type), message: asString(err?.message) });
          return;
        }
        default:
          return; // contentBlockStop, and kinds added later
      }
    },
  };
}
