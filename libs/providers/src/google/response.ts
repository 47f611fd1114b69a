import { asArray, asNumber, asRecord, asString, ProviderBodyError, type Completion, type CompletionChoice, type FinishReason, type ProviderError, type TokenUsage, type ToolCall } from "../types";

/** Finish reasons of a response stopped by a safety or policy filter. */
const FILTERED = new Set([
  "SAFETY",
  "RECITATION",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "IMAGE_SAFETY",
  "IMAGE_PROHIBITED_CONTENT",
  "IMAGE_RECITATION",
]);

/**
 * Gemini finish reasons → normalized; a normal stop with function calls is a tool-call finish.
 * Anything that is neither a stop, a length limit nor a filter (a malformed or unexpected tool
 * call, too many tool calls, an unsupported language, OTHER, IMAGE_OTHER, a value added later)
 * ended the answer abnormally: an error.
 */
export function normalizeGeminiFinish(native: string | null, hasToolCalls: boolean): FinishReason | null {
  if (native === null || native === "FINISH_REASON_UNSPECIFIED") return null;
  if (native === "STOP") return hasToolCalls ? "tool_calls" : "stop";
  if (native === "MAX_TOKENS") return "length";
  if (FILTERED.has(native)) return "content_filter";
  return "error";
}

/** Thoughts are billed as output, so they count in completion tokens. */
export function geminiUsage(v: unknown): TokenUsage | null {
  const u = asRecord(v);
  if (!u) return null;
  const reasoning = asNumber(u.thoughtsTokenCount);
  return {
    prompt: asNumber(u.promptTokenCount) + asNumber(u.toolUsePromptTokenCount),
    completion: asNumber(u.candidatesTokenCount) + reasoning,
    cached: asNumber(u.cachedContentTokenCount),
    reasoning,
  };
}

export function parseGeminiError(text: string): ProviderError {
  try {
    const parsed: unknown = JSON.parse(text);
    // The streaming endpoint without alt=sse wraps errors in an array.
    const err = asRecord(asRecord(Array.isArray(parsed) ? parsed[0] : parsed)?.error);
    return { code: asString(err?.status) ?? (typeof err?.code === "number" ? String(err.code) : null), message: asString(err?.message) };
  } catch {
    return { code: null, message: text.slice(0, 500) || null };
  }
}

export function geminiToolCall(fc: Record<string, unknown>, index: number): ToolCall {
  return {
    id: asString(fc.id) ?? `call_${index}`,
    type: "function",
    function: { name: asString(fc.name) ?? "", arguments: JSON.stringify(fc.args ?? {}) },
  };
}

export function parseGeminiCompletion(body: unknown): Completion {
  const b = asRecord(body);
  if (b && asRecord(b.error)) throw new ProviderBodyError(parseGeminiError(JSON.stringify(b)));
  const usage = geminiUsage(b?.usageMetadata);
  const candidates = asArray(b?.candidates);
  if (!candidates.length) {
    // The prompt itself was blocked: no candidate at all.
    const block = asString(asRecord(b?.promptFeedback)?.blockReason);
    return {
      choices: [{ index: 0, message: { role: "assistant", content: null }, finish_reason: block ? "content_filter" : "stop", native_finish_reason: block }],
      usage,
    };
  }
  const choices: CompletionChoice[] = candidates.map((raw, i) => {
    const c = asRecord(raw) ?? {};
    let text = "";
    let reasoning = "";
    const toolCalls: ToolCall[] = [];
    for (const p of asArray(asRecord(c.content)?.parts)) {
      const part = asRecord(p);
      if (!part) continue;
      const t = asString(part.text);
      if (t !== null) {
        if (part.thought === true) reasoning += t;
        else text += t;
      }
      const fc = asRecord(part.functionCall);
      if (fc) toolCalls.push(geminiToolCall(fc, toolCalls.length));
    }
    const native = asString(c.finishReason);
    const message: CompletionChoice["message"] = { role: "assistant", content: text || (toolCalls.length ? null : "") };
    if (reasoning) message.reasoning = reasoning;
    if (toolCalls.length) message.tool_calls = toolCalls;
    return {
      index: typeof c.index === "number" ? c.index : i,
      message,
      finish_reason: normalizeGeminiFinish(native, toolCalls.length > 0),
      native_finish_reason: native,
    };
  });
  return { choices, usage };
}
