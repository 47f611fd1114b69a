import { asArray, asNumber, asRecord, asString, ProviderBodyError, type Completion, type CompletionMessage, type FinishReason, type ProviderError, type TokenUsage, type ToolCall } from "../types";

/** Anthropic stop reasons → normalized finish reasons. */
export function normalizeAnthropicStop(native: string | null): FinishReason | null {
  switch (native) {
    case null:
      return null;
    case "end_turn":
    case "stop_sequence":
    case "pause_turn":
      return "stop";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "refusal":
      return "content_filter";
    default:
      return "stop";
  }
}

/** Every prompt token: Anthropic reports uncached input, cache reads and cache writes apart. */
export function anthropicUsage(u: Record<string, unknown> | null, output?: number): TokenUsage {
  const cached = asNumber(u?.cache_read_input_tokens);
  return {
    prompt: asNumber(u?.input_tokens) + cached + asNumber(u?.cache_creation_input_tokens),
    completion: output ?? asNumber(u?.output_tokens),
    cached,
    reasoning: 0,
  };
}

export function parseAnthropicError(text: string): ProviderError {
  try {
    const err = asRecord(asRecord(JSON.parse(text))?.error);
    return { code: asString(err?.type), message: asString(err?.message) };
  } catch {
    return { code: null, message: text.slice(0, 500) || null };
  }
}

export function parseAnthropicCompletion(body: unknown): Completion {
  const b = asRecord(body);
  if (b?.type === "error") throw new ProviderBodyError(parseAnthropicError(JSON.stringify(b)));
  let text = "";
  let reasoning = "";
  const toolCalls: ToolCall[] = [];
  for (const raw of asArray(b?.content)) {
    const block = asRecord(raw);
    if (!block) continue;
    if (block.type === "text") text += asString(block.text) ?? "";
    else if (block.type === "thinking") reasoning += asString(block.thinking) ?? "";
    else if (block.type === "tool_use") {
      toolCalls.push({
        id: asString(block.id) ?? "",
        type: "function",
        function: { name: asString(block.name) ?? "", arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  const message: CompletionMessage = { role: "assistant", content: text || (toolCalls.length ? null : "") };
  if (reasoning) message.reasoning = reasoning;
  if (toolCalls.length) message.tool_calls = toolCalls;
  const native = asString(b?.stop_reason);
  return {
    choices: [{ index: 0, message, finish_reason: normalizeAnthropicStop(native), native_finish_reason: native }],
    usage: b?.usage ? anthropicUsage(asRecord(b.usage)) : null,
  };
}
