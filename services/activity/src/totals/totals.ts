import { toUsd, type Nanodollars } from "@router/money";

/**
 * Sums over some requests, as stored in `daily_totals`. Spend is at list price (what the providers
 * charged the organisation on its own keys); fees are what Router charged on top (billed cost).
 */
export interface TotalsSums {
  requests: bigint;
  errors: bigint;
  byokRequests: bigint;
  spend: Nanodollars;
  fees: Nanodollars;
  promptTokens: bigint;
  completionTokens: bigint;
  cachedTokens: bigint;
}

export const EMPTY_SUMS: TotalsSums = {
  requests: 0n,
  errors: 0n,
  byokRequests: 0n,
  spend: 0n,
  fees: 0n,
  promptTokens: 0n,
  completionTokens: 0n,
  cachedTokens: 0n,
};

export function addSums(a: TotalsSums, b: TotalsSums): TotalsSums {
  return {
    requests: a.requests + b.requests,
    errors: a.errors + b.errors,
    byokRequests: a.byokRequests + b.byokRequests,
    spend: a.spend + b.spend,
    fees: a.fees + b.fees,
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    cachedTokens: a.cachedTokens + b.cachedTokens,
  };
}

const MILLION = 1_000_000n;

/** a / b rounded to the nearest whole number (half up), for non-negative bigints. */
function roundedDivision(a: bigint, b: bigint): bigint {
  return (2n * a + b) / (2n * b);
}

/**
 * The Activity totals of the product's API (the service README). A ratio with no denominator is null, never 0: a period without
 * prompt tokens has no cache hit rate, one without tokens no blended price.
 */
export function renderTotals(s: TotalsSums) {
  const tokens = s.promptTokens + s.completionTokens;
  return {
    requests: Number(s.requests),
    errors: Number(s.errors),
    byok_requests: Number(s.byokRequests),
    spend: toUsd(s.spend),
    fees: toUsd(s.fees),
    tokens: Number(tokens),
    prompt_tokens: Number(s.promptTokens),
    cached_tokens: Number(s.cachedTokens),
    cache_hit_rate: s.promptTokens === 0n ? null : Number(s.cachedTokens) / Number(s.promptTokens),
    // USD per million tokens across every model and provider, from nanodollars per million tokens.
    blended_per_million: tokens === 0n ? null : toUsd(roundedDivision(s.spend * MILLION, tokens)),
  };
}

/** The UTC days of the current period and of the prior period of equal length before it. */
export interface SummaryPeriods {
  /** Oldest first; the last is today. */
  currentDays: string[];
  /** First day of the prior period. */
  priorStart: string;
  /** Last day of the prior period. */
  priorEnd: string;
}

const DAY_MS = 86_400_000;
const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * `days` UTC calendar days ending today (today counts, so far), and the `days` before them. Whole
 * days, so the periods line up with the daily series and with the stored daily totals.
 */
export function summaryPeriods(now: Date, days: number): SummaryPeriods {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const currentDays = Array.from({ length: days }, (_, i) => dayOf(today - (days - 1 - i) * DAY_MS));
  return {
    currentDays,
    priorStart: dayOf(today - (2 * days - 1) * DAY_MS),
    priorEnd: dayOf(today - days * DAY_MS),
  };
}
