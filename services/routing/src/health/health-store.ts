import type { Db, Queryable } from "@router/db";
import type { BucketIncrement } from "./health-increments";
import { BUCKET_MS, DAY_BUCKETS, RECENT_BUCKETS, windowStart } from "./health-window";

/** One endpoint's counts over the recent window and over the last 24 h. */
export interface EndpointHealthRow {
  endpointId: string;
  recentAttempts: number;
  recentFailures: number;
  dayAttempts: number;
  dayFailures: number;
  dayTtftSumMs: number;
  dayTtftCount: number;
  /** Completion tokens and generating time of serving attempts over the last 24 h. */
  dayOutputTokens: number;
  dayGenerationMs: number;
  /** Tool calls in served answers over the last 24 h, and those whose arguments were not a JSON object. */
  dayToolCalls: number;
  dayInvalidToolCalls: number;
}

/**
 * Event ids are remembered twice as long as buckets are kept: a redelivery later than that can
 * only carry attempts already outside the retention, which `healthIncrements` drops anyway.
 */
const PROCESSED_EVENTS_RETENTION_MS = 2 * DAY_BUCKETS * BUCKET_MS;

/** One event's increments, counted once per event id. */
export interface EventIncrements {
  eventId: string;
  increments: BucketIncrement[];
}

/**
 * Adds the increments of several events, each once, in one statement (one round trip and one
 * commit per batch on the consumer's path): the event ids are remembered, and an event whose id
 * was already there changes nothing. Counts for one bucket are summed first, so each bucket row is
 * written once, in endpoint then bucket order. Returns the ids that were counted now.
 */
export async function recordHealth(q: Queryable, batch: EventIncrements[], now: Date): Promise<Set<string>> {
  const seen = new Set<string>();
  const flat: Array<BucketIncrement & { eventId: string }> = [];
  for (const { eventId, increments } of batch) {
    // The same event twice in one batch (a duplicate publish) must count once.
    if (seen.has(eventId)) continue;
    seen.add(eventId);
    for (const inc of increments) flat.push({ ...inc, eventId });
  }
  if (seen.size === 0) return new Set();
  const col = <K extends keyof (typeof flat)[number]>(k: K) => flat.map((i) => i[k]);
  const { rows } = await q.query<{ event_id: string }>(
    `WITH first AS (
       INSERT INTO processed_events (event_id, processed_at) SELECT unnest($1::text[]), $2
       ON CONFLICT (event_id) DO NOTHING RETURNING event_id
     ), counted AS (
       INSERT INTO endpoint_health_buckets
         (endpoint_id, bucket_start, attempts, failures, duration_sum_ms, duration_count, ttft_sum_ms, ttft_count,
          output_tokens_sum, generation_ms_sum, tool_calls_sum, invalid_tool_calls_sum)
       SELECT i.endpoint_id, i.bucket_start, sum(i.attempts), sum(i.failures), sum(i.duration_sum_ms),
         sum(i.duration_count), sum(i.ttft_sum_ms), sum(i.ttft_count), sum(i.output_tokens), sum(i.generation_ms),
         sum(i.tool_calls), sum(i.invalid_tool_calls)
       FROM unnest($3::text[], $4::text[], $5::timestamptz[], $6::int[], $7::int[], $8::bigint[], $9::int[], $10::bigint[], $11::int[],
                   $12::bigint[], $13::bigint[], $14::int[], $15::int[])
         AS i(event_id, endpoint_id, bucket_start, attempts, failures, duration_sum_ms, duration_count, ttft_sum_ms, ttft_count,
              output_tokens, generation_ms, tool_calls, invalid_tool_calls)
       JOIN first USING (event_id)
       GROUP BY i.endpoint_id, i.bucket_start
       ORDER BY i.endpoint_id, i.bucket_start
       ON CONFLICT (endpoint_id, bucket_start) DO UPDATE SET
         attempts        = endpoint_health_buckets.attempts + EXCLUDED.attempts,
         failures        = endpoint_health_buckets.failures + EXCLUDED.failures,
         duration_sum_ms = endpoint_health_buckets.duration_sum_ms + EXCLUDED.duration_sum_ms,
         duration_count  = endpoint_health_buckets.duration_count + EXCLUDED.duration_count,
         ttft_sum_ms     = endpoint_health_buckets.ttft_sum_ms + EXCLUDED.ttft_sum_ms,
         ttft_count      = endpoint_health_buckets.ttft_count + EXCLUDED.ttft_count,
         output_tokens_sum = endpoint_health_buckets.output_tokens_sum + EXCLUDED.output_tokens_sum,
         generation_ms_sum = endpoint_health_buckets.generation_ms_sum + EXCLUDED.generation_ms_sum,
         tool_calls_sum = endpoint_health_buckets.tool_calls_sum + EXCLUDED.tool_calls_sum,
         invalid_tool_calls_sum = endpoint_health_buckets.invalid_tool_calls_sum + EXCLUDED.invalid_tool_calls_sum
       RETURNING 1
     )
     SELECT event_id FROM first`,
    [
      [...seen],
      now,
      col("eventId"),
      col("endpointId"),
      flat.map((i) => new Date(i.bucketStartMs)),
      col("attempts"),
      col("failures"),
      col("durationSumMs"),
      col("durationCount"),
      col("ttftSumMs"),
      col("ttftCount"),
      col("outputTokens"),
      col("generationMs"),
      col("toolCalls"),
      col("invalidToolCalls"),
    ],
    { prepare: true },
  );
  return new Set(rows.map((r) => r.event_id));
}

interface RawRow {
  endpoint_id: string;
  recent_attempts: unknown;
  recent_failures: unknown;
  day_attempts: unknown;
  day_failures: unknown;
  ttft_sum_ms: unknown;
  ttft_count: unknown;
  output_tokens: unknown;
  generation_ms: unknown;
  tool_calls: unknown;
  invalid_tool_calls: unknown;
}

// float8 comes back as a number from both pg and PGlite; a FILTER over no rows gives null.
const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

/** Every endpoint with attempts in the last 24 h, summed over both windows in one scan. */
export async function loadHealth(db: Queryable, now: Date): Promise<EndpointHealthRow[]> {
  const { rows } = await db.query<RawRow>(
    `SELECT endpoint_id,
            (sum(attempts) FILTER (WHERE bucket_start >= $2))::float8 AS recent_attempts,
            (sum(failures) FILTER (WHERE bucket_start >= $2))::float8 AS recent_failures,
            sum(attempts)::float8    AS day_attempts,
            sum(failures)::float8    AS day_failures,
            sum(ttft_sum_ms)::float8 AS ttft_sum_ms,
            sum(ttft_count)::float8  AS ttft_count,
            sum(output_tokens_sum)::float8 AS output_tokens,
            sum(generation_ms_sum)::float8 AS generation_ms,
            sum(tool_calls_sum)::float8 AS tool_calls,
            sum(invalid_tool_calls_sum)::float8 AS invalid_tool_calls
       FROM endpoint_health_buckets
      WHERE bucket_start >= $1
      GROUP BY endpoint_id`,
    [windowStart(now, DAY_BUCKETS), windowStart(now, RECENT_BUCKETS)],
  );
  return rows.map((r) => ({
    endpointId: r.endpoint_id,
    recentAttempts: num(r.recent_attempts),
    recentFailures: num(r.recent_failures),
    dayAttempts: num(r.day_attempts),
    dayFailures: num(r.day_failures),
    dayTtftSumMs: num(r.ttft_sum_ms),
    dayTtftCount: num(r.ttft_count),
    dayOutputTokens: num(r.output_tokens),
    dayGenerationMs: num(r.generation_ms),
    dayToolCalls: num(r.tool_calls),
    dayInvalidToolCalls: num(r.invalid_tool_calls),
  }));
}

/** Deletes buckets that left the 24 h window and event ids past their retention. */
export async function pruneHealth(db: Db, now: Date): Promise<{ buckets: number; events: number }> {
  const buckets = await db.query("DELETE FROM endpoint_health_buckets WHERE bucket_start < $1", [
    windowStart(now, DAY_BUCKETS),
  ]);
  const events = await db.query("DELETE FROM processed_events WHERE processed_at < $1", [
    new Date(now.getTime() - PROCESSED_EVENTS_RETENTION_MS),
  ]);
  return { buckets: buckets.rowCount, events: events.rowCount };
}
