import type { ReasoningDetail } from "@router/chat-request";
import { asArray, asNumber, asRecord, asString, ProviderBodyError, type Completion, type CompletionMessage, type FinishReason, type ProviderError, type TokenUsage, type ToolCall } from "../types";

/** The `format` of Anthropic's thinking blocks in `reasoning_details`; only these are echoed back. */
export const ANTHROPIC_REASONING_FORMAT = "anthropic-claude-v1";

/** A thinking block (or a piece of one) as a reasoning detail; `index` counts reasoning blocks. */
export function thinkingDetail(text: string, signature: string | null, index: number): ReasoningDetail {
  return { type: "reasoning.text", text, signature, format: ANTHROPIC_REASONING_FORMAT, index };
}

/** A redacted_thinking block as a reasoning detail: its encrypted data travels, nothing readable. */
export function redactedThinkingDetail(data: string, index: number): ReasoningDetail {
  return { type: "reasoning.encrypted", data, format: ANTHROPIC_REASONING_FORMAT, index };
}

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

/**
 * Every prompt token: Anthropic reports uncached input, cache reads and cache writes apart
 * (`input_tokens` excludes both). Writes come as a total with a per-TTL breakdown; a total
 * without a breakdown (older API versions) is all five-minute writes.
 */
export function anthropicUsage(u: Record<string, unknown> | null): TokenUsage {
  const cached = asNumber(u?.cache_read_input_tokens);
  const breakdown = asRecord(u?.cache_creation);
  const written =
    u?.cache_creation_input_tokens !== undefined
      ? asNumber(u.cache_creation_input_tokens)
      : asNumber(breakdown?.ephemeral_5m_input_tokens) + asNumber(breakdown?.ephemeral_1h_input_tokens);
  const write1h = Math.min(asNumber(breakdown?.ephemeral_1h_input_tokens), written);
  const usage: TokenUsage = {
    prompt: asNumber(u?.input_tokens) + cached + written,
    completion: asNumber(u?.output_tokens),
    cached,
    reasoning: 0,
  };
  if (written - write1h > 0) usage.cacheWrite5m = written - write1h;
  if (write1h > 0) usage.cacheWrite1h = write1h;
  return usage;
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
  const details: ReasoningDetail[] = [];
  const toolCalls: ToolCall[] = [];
  for (const raw of asArray(b?.content)) {
    const block = asRecord(raw);
    if (!block) continue;
    if (block.type === "text") text += asString(block.text) ?? "";
    else if (block.type === "thinking") {
      const thinking = asString(block.thinking) ?? "";
      reasoning += thinking;
      details.push(thinkingDetail(thinking, asString(block.signature) || null, details.length));
    } else if (block.type === "redacted_thinking") {
      const data = asString(block.data);
      if (data) details.push(redactedThinkingDetail(data, details.length));
    } else if (block.type === "tool_use") {
      toolCalls.push({
        id: asString(block.id) ?? "",
        type: "function",
        function: { name: asString(block.name) ?? "", arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  const message: CompletionMessage = { role: "assistant", content: text || (toolCalls.length ? null : "") };
  if (reasoning) message.reasoning = reasoning;
  if (details.length) message.reasoning_details = details;
  if (toolCalls.length) message.tool_calls = toolCalls;
  const native = asString(b?.stop_reason);
  return {
    choices: [{ index: 0, message, finish_reason: normalizeAnthropicStop(native), native_finish_reason: native }],
    usage: b?.usage ? anthropicUsage(asRecord(b.usage)) : null,
    ...(b ? { native: b } : {}),
  };
}
