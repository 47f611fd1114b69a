import type { Queryable } from "@router/db";
import { toNanos, type Nanodollars } from "@router/money";
import { bucketStartOf } from "../sweep/runaway-rule";

/** What the runaway rule needs of one completed request. */
export interface CountedRequest {
  requestId: string;
  orgId: string;
  /** Empty when the request was made without a key (none does today). */
  keyHash: string;
  keyName: string;
  /** Empty when the request named no agent. */
  agent: string;
  createdAt: Date;
  listCostNanos: Nanodollars;
}

// A batch of requests in one statement: the ids not counted before are recorded, and only those
// add to their subjects' buckets (a key's and, when it names one, an agent's). A request twice in one
// batch counts once. Rows arrive as JSON; Postgres converts each value to its column's type.
const COUNT_REQUESTS = `WITH input AS (
  SELECT DISTINCT ON (x.request_id) x.request_id, x.org_id, x.key_hash, x.key_name, x.agent, x.created_at,
    x.bucket_start, x.cost
  FROM jsonb_to_recordset($1::jsonb) AS x(request_id text, org_id text, key_hash text, key_name text, agent text,
    created_at timestamptz, bucket_start timestamptz, cost bigint)
), fresh AS (
  INSERT INTO counted_requests (request_id, created_at)
  SELECT request_id, created_at FROM input
  ON CONFLICT (request_id) DO NOTHING
  RETURNING request_id
), counted AS (
  SELECT i.* FROM input i JOIN fresh f ON f.request_id = i.request_id
), subjects AS (
  SELECT org_id, 'key' AS subject_kind, key_hash AS subject, key_name, bucket_start, cost FROM counted WHERE key_hash <> ''
  UNION ALL
  SELECT org_id, 'agent', agent, NULL, bucket_start, cost FROM counted WHERE agent <> ''
), added AS (
  INSERT INTO buckets (org_id, subject_kind, subject, bucket_start, spend_nanodollars, requests, key_name)
  SELECT org_id, subject_kind, subject, bucket_start, sum(cost), count(*), max(key_name)
  FROM subjects GROUP BY org_id, subject_kind, subject, bucket_start
  -- One row order for every writer, so two batches touching the same buckets cannot deadlock.
  ORDER BY org_id, subject_kind, subject, bucket_start
  ON CONFLICT (org_id, subject_kind, subject, bucket_start) DO UPDATE SET
    spend_nanodollars = buckets.spend_nanodollars + EXCLUDED.spend_nanodollars,
    requests = buckets.requests + EXCLUDED.requests,
    key_name = COALESCE(EXCLUDED.key_name, buckets.key_name)
)
SELECT request_id FROM fresh`;

/**
 * Adds requests to their subjects' buckets, each request once however often it arrives. Returns the
 * ids counted now (the others were counted before).
 */
export async function countRequests(q: Queryable, requests: readonly CountedRequest[]): Promise<Set<string>> {
  if (requests.length === 0) return new Set();
  const rows = requests.map((r) => ({
    request_id: r.requestId,
    org_id: r.orgId,
    key_hash: r.keyHash,
    key_name: r.keyName === "" ? null : r.keyName,
    agent: r.agent,
    created_at: r.createdAt.toISOString(),
    bucket_start: bucketStartOf(r.createdAt.getTime()).toISOString(),
    cost: r.listCostNanos.toString(),
  }));
  const r = await q.query<{ request_id: string }>(COUNT_REQUESTS, [JSON.stringify(rows)]);
  return new Set(r.rows.map((row) => row.request_id));
}

/** One subject's window with the sums of its usual span, as the sweep reads them. */
export interface SubjectWindowRow {
  orgId: string;
  subjectKind: "key" | "agent";
  subject: string;
  keyName: string | null;
  spendNanos: Nanodollars;
  requests: bigint;
  usualSpanSpendNanos: Nanodollars;
  usualSpanRequests: bigint;
}

interface WindowRow {
  org_id: string;
  subject_kind: "key" | "agent";
  subject: string;
  key_name: string | null;
  spend: string | number;
  requests: string | number;
  usual_spend: string | number;
  usual_requests: string | number;
}

// Only subjects past an absolute floor in the window can break the rule, so the usual span is summed
// for those alone: a sweep costs the window's rows plus the candidates' days, not every subject's.
const CANDIDATES = `WITH w AS (
  SELECT org_id, subject_kind, subject, sum(spend_nanodollars) AS spend, sum(requests) AS requests
  FROM buckets WHERE bucket_start >= $1 AND bucket_start <= $2
  GROUP BY org_id, subject_kind, subject
  HAVING sum(spend_nanodollars) >= $4 OR sum(requests) >= $5
)
SELECT w.org_id, w.subject_kind, w.subject, w.spend, w.requests,
  COALESCE(u.spend, 0) AS usual_spend, COALESCE(u.requests, 0) AS usual_requests, n.key_name
FROM w
LEFT JOIN LATERAL (
  SELECT sum(b.spend_nanodollars) AS spend, sum(b.requests) AS requests FROM buckets b
  WHERE b.org_id = w.org_id AND b.subject_kind = w.subject_kind AND b.subject = w.subject
    AND b.bucket_start >= $3 AND b.bucket_start < $1
) u ON true
LEFT JOIN LATERAL (
  SELECT b.key_name FROM buckets b
  WHERE b.org_id = w.org_id AND b.subject_kind = w.subject_kind AND b.subject = w.subject AND b.key_name IS NOT NULL
  ORDER BY b.bucket_start DESC LIMIT 1
) n ON true
ORDER BY w.org_id, w.subject_kind, w.subject`;

/**
 * Every subject whose window [`windowStart`, `windowEnd`] reaches `minSpend` or `minRequests`, with
 * the sums of its usual span [`usualFrom`, `windowStart`).
 */
export async function candidateWindows(
  q: Queryable,
  span: { windowStart: Date; windowEnd: Date; usualFrom: Date },
  floors: { minSpendNanos: Nanodollars; minRequests: bigint },
): Promise<SubjectWindowRow[]> {
  const r = await q.query<WindowRow>(CANDIDATES, [
    span.windowStart,
    span.windowEnd,
    span.usualFrom,
    floors.minSpendNanos.toString(),
    floors.minRequests.toString(),
  ]);
  return r.rows.map((row) => ({
    orgId: row.org_id,
    subjectKind: row.subject_kind,
    subject: row.subject,
    keyName: row.key_name,
    spendNanos: toNanos(row.spend),
    requests: toNanos(row.requests),
    usualSpanSpendNanos: toNanos(row.usual_spend),
    usualSpanRequests: toNanos(row.usual_requests),
  }));
}

/** Drops buckets and counted request ids older than `before`; returns how many buckets went. */
export async function pruneBuckets(q: Queryable, before: Date): Promise<number> {
  const r = await q.query("DELETE FROM buckets WHERE bucket_start < $1", [before]);
  await q.query("DELETE FROM counted_requests WHERE created_at < $1", [before]);
  return r.rowCount;
}
