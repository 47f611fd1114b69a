import { asString, parseRecord, type ProviderError, type ResponseHeaders } from "../types";

const headerOf = (headers: ResponseHeaders | undefined, name: string): string | null => {
  const v = headers?.[name];
  return typeof v === "string" ? v : Array.isArray(v) ? (v[0] ?? null) : null;
};

/**
 * Bedrock's errors: `{"message": "..."}` with the type in the `x-amzn-errortype` header
 * (`ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/`); some front ends put
 * it in the body as `__type` (`com.amazon.coral.service#UnrecognizedClientException`) instead.
 */
export function parseBedrockError(text: string, headers?: ResponseHeaders): ProviderError {
  const body = parseRecord(text);
  const raw = headerOf(headers, "x-amzn-errortype") ?? asString(body?.__type) ?? asString(body?.code);
  const code = raw ? (raw.split(":")[0]?.split("#").pop() ?? "") : "";
  const message = body ? (asString(body.message) ?? asString(body.Message)) : text.slice(0, 500) || null;
  return { code: code || null, message };
}
