import { asRecord, asString, type ProviderError } from "../types";

/**
 * Vertex AI's errors are Google's (`{"error": {"code": 429, "message", "status": "RESOURCE_EXHAUSTED"}}`,
 * sometimes inside an array); Claude's own refusals come through in Anthropic's shape
 * (`{"type": "error", "error": {"type": "invalid_request_error", "message"}}`). The code is the
 * status name, else Anthropic's error type, else the numeric code.
 */
export function parseVertexError(text: string): ProviderError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { code: null, message: text.slice(0, 500) || null };
  }
  const err = asRecord(asRecord(Array.isArray(parsed) ? parsed[0] : parsed)?.error);
  if (!err) return { code: null, message: null };
  const code = asString(err.status) ?? asString(err.type) ?? (typeof err.code === "number" ? String(err.code) : null);
  return { code, message: asString(err.message) };
}
