import { costOfTokens, type Nanodollars } from "@router/money";
import type { Candidate } from "../dispatch/types";
import type { Completion, TokenUsage } from "@router/providers";

export interface UsageLine {
  kind: "prompt" | "cached_prompt" | "cache_write_5m" | "cache_write_1h" | "completion";
  tokens: number;
  pricePerMillion: Nanodollars;
  cost: Nanodollars;
  priceVersionId: bigint;
}

/** The prompt tokens a provider reported, split by how each is priced; the parts sum to `usage.prompt`. */
export interface PromptParts {
  uncached: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
}

/**
 * Splits the prompt count. A provider's parts should fit inside its total; when they do not, reads
 * then writes are cut to fit, so no token is billed twice.
 */
export function promptParts(usage: TokenUsage): PromptParts {
  const cacheRead = Math.min(usage.cached, usage.prompt);
  const cacheWrite1h = Math.min(usage.cacheWrite1h ?? 0, usage.prompt - cacheRead);
  const cacheWrite5m = Math.min(usage.cacheWrite5m ?? 0, usage.prompt - cacheRead - cacheWrite1h);
  return { uncached: usage.prompt - cacheRead - cacheWrite1h - cacheWrite5m, cacheRead, cacheWrite5m, cacheWrite1h };
}

/** Per-kind prices per million tokens; a price the catalog does not list (0) is the prompt price. */
export function effectivePrices(c: Candidate): Record<UsageLine["kind"], Nanodollars> {
  const prompt = c.price?.promptPerMillion ?? 0n;
  const orPrompt = (p: Nanodollars | undefined): Nanodollars => (p !== undefined && p > 0n ? p : prompt);
  return {
    prompt,
    cached_prompt: orPrompt(c.price?.cachedPromptPerMillion),
    cache_write_5m: orPrompt(c.price?.cacheWrite5mPerMillion),
    cache_write_1h: orPrompt(c.price?.cacheWrite1hPerMillion),
    completion: c.price?.completionPerMillion ?? 0n,
  };
}

/**
 * Usage priced at the serving endpoint's list price; each line rounded up to a whole nanodollar.
 * Lines for cache reads and writes appear only when the provider reported some.
 */
export function usageLines(usage: TokenUsage, c: Candidate): UsageLine[] {
  const version = c.price?.priceVersionId ?? 0n;
  const prices = effectivePrices(c);
  const parts = promptParts(usage);
  const line = (kind: UsageLine["kind"], tokens: number): UsageLine => ({
    kind,
    tokens,
    pricePerMillion: prices[kind],
    cost: costOfTokens(tokens, prices[kind]),
    priceVersionId: version,
  });
  const lines = [line("prompt", parts.uncached)];
  if (parts.cacheRead > 0) lines.push(line("cached_prompt", parts.cacheRead));
  if (parts.cacheWrite5m > 0) lines.push(line("cache_write_5m", parts.cacheWrite5m));
  if (parts.cacheWrite1h > 0) lines.push(line("cache_write_1h", parts.cacheWrite1h));
  lines.push(line("completion", usage.completion));
  return lines;
}

export function totalCost(lines: UsageLine[]): Nanodollars {
  let sum = 0n;
  for (const l of lines) sum += l.cost;
  return sum;
}

/**
 * When a provider reports no usage (some OpenAI-compatible servers ignore `include_usage`), spend
 * must still be counted: about four bytes a token, rounded up.
 */
export function estimatedUsage(promptBytes: number, completionChars: number): TokenUsage {
  return { prompt: Math.ceil(promptBytes / 4), completion: Math.ceil(completionChars / 4), cached: 0, reasoning: 0 };
}

/**
 * What a stream used. A provider's count is taken as it is when the stream ended normally. When the
 * client left or the stream broke, the provider's last count may be from before the output (Anthropic
 * reports output tokens on its opening event and again only at the end), so the completion is at
 * least what was streamed.
 */
export function streamUsage(reported: TokenUsage | null, streamed: TokenUsage, cutShort: boolean): TokenUsage {
  if (!reported) return streamed;
  if (!cutShort || reported.completion >= streamed.completion) return reported;
  return { ...reported, completion: streamed.completion };
}

/** Characters of generated text, reasoning and tool arguments, for estimating unreported usage. */
export function completionChars(c: Completion): number {
  let n = 0;
  for (const ch of c.choices) {
    n += (ch.message.content?.length ?? 0) + (ch.message.reasoning?.length ?? 0);
    for (const t of ch.message.tool_calls ?? []) n += t.function.arguments.length;
  }
  return n;
}
