import { costOfTokens, maxNanos, type Nanodollars } from "@router/money";
import type { Candidate } from "../dispatch/types";
import { reasoningAllowance, requestedMaxTokens } from "@router/providers";
import type { ChatRequest } from "@router/chat-request";
import { effectivePrices } from "./usage-cost";

/**
 * Prompt tokens are at most the UTF-8 byte length of what is sent: no tokenizer emits more tokens
 * than bytes. The JSON text of messages and tools over-counts a little (keys, quotes), which also
 * covers the few tokens each message costs in the provider's template.
 */
export function promptTokenBound(req: ChatRequest): number {
  let bytes = Buffer.byteLength(JSON.stringify(req.messages), "utf8");
  if (req.tools?.length) bytes += Buffer.byteLength(JSON.stringify(req.tools), "utf8");
  return bytes;
}

/**
 * Completion tokens are at most what the request allows (plus a thinking budget that a provider
 * adds on top), else the endpoint's max output, else its context length.
 */
export function completionTokenBound(req: ChatRequest, c: Candidate): number {
  const requested = requestedMaxTokens(req);
  const base = requested ?? (c.maxOutputTokens > 0 ? c.maxOutputTokens : c.contextLength);
  return base + reasoningAllowance(req);
}

/**
 * The worst-case list cost of a request over its cascade: the most expensive endpoint's bound.
 * Every prompt token may be a cache write, which costs more than a plain prompt token (Anthropic:
 * 1.25x for five minutes, 2x for an hour), so the prompt bound is priced at the highest prompt-side price.
 */
export function worstCaseCost(req: ChatRequest, cascade: Candidate[], prompt = promptTokenBound(req)): Nanodollars {
  return maxNanos(
    ...cascade.map((c) => {
      if (!c.price) return 0n;
      const prices = effectivePrices(c);
      const promptSide = maxNanos(prices.prompt, prices.cached_prompt, prices.cache_write_5m, prices.cache_write_1h);
      return costOfTokens(prompt, promptSide) + costOfTokens(completionTokenBound(req, c), prices.completion);
    }),
  );
}
