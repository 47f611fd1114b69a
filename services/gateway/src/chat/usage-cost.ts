import { costOfTokens, type Nanodollars } from "@router/money";
import type { Candidate } from "../dispatch/types";
import type { Completion, TokenUsage } from "../providers/types";

export interface UsageLine {
  kind: "prompt" | "cached_prompt" | "completion";
  tokens: number;
  pricePerMillion: Nanodollars;
  cost: Nanodollars;
  priceVersionId: bigint;
}

/** Usage priced at the serving endpoint's list price; each line rounded up to a whole nanodollar. */
export function usageLines(usage: TokenUsage, c: Candidate): UsageLine[] {
  const price = c.price;
  const version = price?.priceVersionId ?? 0n;
  const promptPrice = price?.promptPerMillion ?? 0n;
  const cachedPrice = price && price.cachedPromptPerMillion > 0n ? price.cachedPromptPerMillion : promptPrice;
  const completionPrice = price?.completionPerMillion ?? 0n;
  const cached = Math.min(usage.cached, usage.prompt);
  const line = (kind: UsageLine["kind"], tokens: number, perMillion: Nanodollars): UsageLine => ({
    kind,
    tokens,
    pricePerMillion: perMillion,
    cost: costOfTokens(tokens, perMillion),
    priceVersionId: version,
  });
  const lines = [line("prompt", usage.prompt - cached, promptPrice)];
  if (cached > 0) lines.push(line("cached_prompt", cached, cachedPrice));
  lines.push(line("completion", usage.completion, completionPrice));
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
