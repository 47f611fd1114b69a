import { normalizeOpenAiFinish } from "../message-content";
import {
  asArray,
  asNumber,
  asRecord,
  asString,
  ProviderBodyError,
  type Completion,
  type CompletionChoice,
  type ProviderError,
  type TokenUsage,
  type ToolCall,
} from "../types";

/** `[{"loc": ["body", "stream_options"], "msg": "Extra inputs are not permitted"}]` as one line. */
function validationDetail(v: unknown): { code: string | null; message: string } | null {
  const items = asArray(v).map(asRecord).filter((d): d is Record<string, unknown> => d !== null);
  if (!items.length) return null;
  const message = items.map((d) => `${asString(d.msg) ?? "invalid"}: ${asArray(d.loc).join(".")}`).join("; ");
  return { code: asString(items[0]?.type), message };
}

/**
 * Reads `{"error": {"message", "type", "code"}}`, the shape OpenAI-compatible servers share, and
 * the top-level variants: vLLM's `{"object": "error", "message", "type"}`, Mistral's validation
 * errors (`message: {"detail": [...]}`), FastAPI's `{"detail": ...}` and Ollama's `{"error": "text"}`.
 */
export function parseOpenAiError(text: string): ProviderError {
  let body: Record<string, unknown> | null;
  try {
    body = asRecord(JSON.parse(text));
  } catch {
    return { code: null, message: text.slice(0, 500) || null };
  }
  const err = asRecord(body?.error);
  if (err) {
    const code = asString(err.code) ?? (typeof err.code === "number" ? String(err.code) : null) ?? asString(err.type);
    return { code, message: asString(err.message) };
  }
  const detail = validationDetail(asRecord(body?.message)?.detail ?? body?.detail);
  if (detail) return { code: detail.code ?? asString(body?.type), message: detail.message };
  return {
    code: asString(body?.type),
    message: asString(body?.error) ?? asString(body?.message) ?? asString(body?.detail),
  };
}

export function parseOpenAiUsage(v: unknown): TokenUsage | null {
  const u = asRecord(v);
  if (!u) return null;
  const details = asRecord(u.prompt_tokens_details);
  const cached = asNumber(details?.cached_tokens) || asNumber(u.prompt_cache_hit_tokens);
  const usage: TokenUsage = {
    prompt: asNumber(u.prompt_tokens),
    completion: asNumber(u.completion_tokens),
    cached,
    reasoning: asNumber(asRecord(u.completion_tokens_details)?.reasoning_tokens),
  };
  // Gateways in front of providers that price writes (OpenRouter, LiteLLM) report them here; OpenAI never writes at a premium.
  const written = asNumber(details?.cache_write_tokens);
  if (written > 0) usage.cacheWrite5m = written;
  return usage;
}

function toolCallsOf(v: unknown): ToolCall[] | undefined {
  const calls = asArray(v)
    .map(asRecord)
    .filter((c): c is Record<string, unknown> => c !== null)
    .map((c) => {
      const fn = asRecord(c.function);
      return {
        id: asString(c.id) ?? "",
        type: "function" as const,
        function: { name: asString(fn?.name) ?? "", arguments: asString(fn?.arguments) ?? "" },
      };
    });
  return calls.length ? calls : undefined;
}

export function parseOpenAiCompletion(body: unknown): Completion {
  const b = asRecord(body);
  if (b && asRecord(b.error)) throw new ProviderBodyError(parseOpenAiError(JSON.stringify(b)));
  const choices: CompletionChoice[] = asArray(b?.choices).map((raw, i) => {
    const c = asRecord(raw) ?? {};
    const m = asRecord(c.message) ?? {};
    const native = asString(c.finish_reason);
    const message: CompletionChoice["message"] = { role: "assistant", content: asString(m.content) };
    // DeepSeek and vLLM say reasoning_content; Groq and others say reasoning.
    const reasoning = asString(m.reasoning_content) ?? asString(m.reasoning);
    if (reasoning) message.reasoning = reasoning;
    const toolCalls = toolCallsOf(m.tool_calls);
    if (toolCalls) message.tool_calls = toolCalls;
    return {
      index: typeof c.index === "number" ? c.index : i,
      message,
      finish_reason: normalizeOpenAiFinish(native),
      native_finish_reason: native,
    };
  });
  return { choices, usage: parseOpenAiUsage(b?.usage) };
}
