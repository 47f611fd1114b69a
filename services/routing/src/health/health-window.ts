/** Health counts are kept per endpoint per bucket of this length, aligned to the epoch (UTC). */
export const BUCKET_MS = 5 * 60_000;

/** Plan's "recent" window: the current bucket and the two before it (10 to 15 minutes of attempts). */
export const RECENT_BUCKETS = 3;

/** The catalog's window and the retention: the current bucket and the 287 before it (24 h). */
export const DAY_BUCKETS = 288;

export function bucketStartOf(ms: number): number {
  return Math.floor(ms / BUCKET_MS) * BUCKET_MS;
}

/** The start of the oldest bucket inside a window of `buckets` buckets ending with the current one. */
export function windowStart(now: Date, buckets: number): Date {
  return new Date(bucketStartOf(now.getTime()) - (buckets - 1) * BUCKET_MS);
}
