import { NANOS_PER_USD, type Nanodollars } from "@router/money";

/**
 * The runaway rule of the product's API (the service README), as pure arithmetic. A subject (a key or an agent) is flagged when
 * its last 15 minutes cost at least 3 times its usual 15 minutes and at least 5 USD, or held at least
 * 5 times its usual request count and at least 300 requests.
 *
 * "Usual" is the mean per 15 minutes over the 24 hours before the window: the sum of those 24 hours
 * divided by 96, a quarter-hour without traffic counting as zero. A subject seen for the first time
 * therefore has a usual of zero (or little), and only the absolute floors (5 USD, 300 requests) hold
 * it back (docs/adr, ADR 0087).
 */

export const BUCKET_MS = 5 * 60_000;
export const WINDOW_MS = 15 * 60_000;
export const USUAL_SPAN_MS = 24 * 60 * 60_000;
/** Fifteen-minute windows in the usual span. */
export const WINDOWS_PER_USUAL_SPAN = BigInt(USUAL_SPAN_MS / WINDOW_MS);
/** A subject is flagged at most once in this long. */
export const FLAG_INTERVAL_MS = 60 * 60_000;
/** Buckets and counted request ids are kept this long: the window, its usual day and an hour's slack. */
export const BUCKET_RETENTION_MS = USUAL_SPAN_MS + WINDOW_MS + 45 * 60_000;

const SPEND_MULTIPLE = 3n;
const RATE_MULTIPLE = 5n;

/** The absolute floors of the rule; the product's are the defaults (tests may lower them). */
export interface RuleFloors {
  minSpendNanos: Nanodollars;
  minRequests: bigint;
}

export const SPEC_FLOORS: RuleFloors = { minSpendNanos: 5n * NANOS_PER_USD, minRequests: 300n };

/** One subject's window and the sums of its usual span (not yet divided into a mean). */
export interface SubjectTotals {
  spendNanos: Nanodollars;
  requests: bigint;
  usualSpanSpendNanos: Nanodollars;
  usualSpanRequests: bigint;
}

export type RunawayKind = "spend" | "rate";

/**
 * Which part of the rule the subject breaks, spend before rate when it breaks both; null when it
 * breaks neither. Compared in integers: `window >= k * sum / 96` is `window * 96 >= k * sum`.
 */
export function runawayKind(t: SubjectTotals, floors: RuleFloors): RunawayKind | null {
  const spendRunaway =
    t.spendNanos >= floors.minSpendNanos && t.spendNanos * WINDOWS_PER_USUAL_SPAN >= SPEND_MULTIPLE * t.usualSpanSpendNanos;
  if (spendRunaway) return "spend";
  const rateRunaway =
    t.requests >= floors.minRequests && t.requests * WINDOWS_PER_USUAL_SPAN >= RATE_MULTIPLE * t.usualSpanRequests;
  return rateRunaway ? "rate" : null;
}

/** The usual spend per 15 minutes, rounded to the nearest nanodollar. */
export function usualSpendPerWindow(usualSpanSpendNanos: Nanodollars): Nanodollars {
  return (usualSpanSpendNanos * 2n + WINDOWS_PER_USUAL_SPAN) / (2n * WINDOWS_PER_USUAL_SPAN);
}

/** The usual request count per 15 minutes (a mean, so fractional). */
export function usualRequestsPerWindow(usualSpanRequests: bigint): number {
  return Number(usualSpanRequests) / Number(WINDOWS_PER_USUAL_SPAN);
}

/** Whether a subject last flagged at `lastFlaggedAt` (null: never) may be flagged again at `now`. */
export function mayFlagAgain(lastFlaggedAt: Date | null, now: Date): boolean {
  return lastFlaggedAt === null || lastFlaggedAt.getTime() <= flaggedBefore(now).getTime();
}

/** A subject last flagged at or before this instant may be flagged at `now`. */
export function flaggedBefore(now: Date): Date {
  return new Date(now.getTime() - FLAG_INTERVAL_MS);
}

/** The bucket an instant falls in, by its start. */
export function bucketStartOf(ms: number): Date {
  return new Date(Math.floor(ms / BUCKET_MS) * BUCKET_MS);
}

/**
 * What a sweep at `now` looks at. The window is the three 5-minute buckets before the one `now` is
 * in, plus that one so far: at a sweep on a 5-minute boundary (the timer aims there) exactly the last
 * 15 minutes; a sweep between boundaries reads up to 5 minutes more. The usual span is the 24 hours
 * before the window.
 */
export interface SweepWindow {
  start: Date;
  end: Date;
  usualFrom: Date;
}

export function sweepWindow(now: Date): SweepWindow {
  const start = new Date(bucketStartOf(now.getTime()).getTime() - WINDOW_MS);
  return { start, end: now, usualFrom: new Date(start.getTime() - USUAL_SPAN_MS) };
}
