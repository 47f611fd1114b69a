import type { Candidate } from "../dispatch/types";
import { requestedMaxTokens } from "@router/providers";
import type { ChatRequest } from "@router/chat-request";

/**
 * Says that `max_tokens` was cut to the endpoint's maximum output (`withinMaxOutput`; the Anthropic
 * adapter's own body does the same): the value sent, so a client knows its answer may stop sooner
 * than it asked. None when the request fit.
 */
export const MAX_TOKENS_HEADER = "x-router-max-tokens";

export function maxTokensHeader(req: ChatRequest, endpoint: Pick<Candidate, "maxOutputTokens">): Record<string, string> {
  const requested = requestedMaxTokens(req);
  const limit = endpoint.maxOutputTokens;
  return requested !== undefined && limit > 0 && requested > limit ? { [MAX_TOKENS_HEADER]: String(limit) } : {};
}
