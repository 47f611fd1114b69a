import type { Queryable } from "@router/db";
import type { CountedRequest } from "./counted-request";

/** The counters every rollup row keeps, in column order. */
export const ROLLUP_COUNTERS = [
  "requests",
  "complete_requests",
  "error_requests",
  "refused_requests",
  "cancelled_requests",
  "prompt_tokens",
  "completion_tokens",
  "cached_tokens",
  "reasoning_tokens",
  "list_cost_nanodollars",
] as const;

export type RollupCounter = (typeof ROLLUP_COUNTERS)[number];

// One statement per batch of events, so counting a request and adding it to its month commit
// together: a request is added to the rollups only by the statement that first records it in
// counted_requests, so a redelivery or a replayed topic adds nothing. Each new request adds to
// three rows of its month (its model, its agent, its day); rows are written in key order so
// concurrent consumers lock them in the same order.
const COUNT_REQUESTS = `WITH incoming AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(
    request_id text, org_id text, workspace_id text, workspace_name text, created_at timestamptz,
    month date, day text, model text, agent text, status text, prompt_tokens bigint,
    completion_tokens bigint, cached_tokens bigint, reasoning_tokens bigint, list_cost_nanodollars bigint)
), fresh AS (
  INSERT INTO counted_requests (request_id, org_id, workspace_id, month, counted_at)
  SELECT DISTINCT ON (request_id) request_id, org_id, workspace_id, month, $2::timestamptz FROM incoming
  ON CONFLICT (request_id) DO NOTHING
  RETURNING request_id
), counted AS (
  SELECT DISTINCT ON (i.request_id) i.* FROM incoming i JOIN fresh f ON f.request_id = i.request_id
), keyed AS (
  SELECT c.*, k.dimension, k.key FROM counted c
  CROSS JOIN LATERAL (VALUES ('model', c.model), ('agent', c.agent), ('day', c.day)) AS k(dimension, key)
), added AS (
  INSERT INTO rollups (org_id, workspace_id, month, dimension, key, ${ROLLUP_COUNTERS.join(", ")})
  SELECT org_id, workspace_id, month, dimension, key, count(*),
    count(*) FILTER (WHERE status = 'complete'), count(*) FILTER (WHERE status = 'error'),
    count(*) FILTER (WHERE status = 'refused'), count(*) FILTER (WHERE status = 'cancelled'),
    sum(prompt_tokens), sum(completion_tokens), sum(cached_tokens), sum(reasoning_tokens), sum(list_cost_nanodollars)
  FROM keyed
  GROUP BY org_id, workspace_id, month, dimension, key
  ORDER BY org_id, workspace_id, month, dimension, key
  ON CONFLICT (org_id, workspace_id, month, dimension, key) DO UPDATE SET
    ${ROLLUP_COUNTERS.map((c) => `${c} = rollups.${c} + EXCLUDED.${c}`).join(",\n    ")}
), named AS (
  INSERT INTO workspace_months (org_id, workspace_id, month, name, name_seen_at)
  SELECT DISTINCT ON (org_id, workspace_id, month) org_id, workspace_id, month, workspace_name, created_at
  FROM counted WHERE workspace_name <> ''
  ORDER BY org_id, workspace_id, month, created_at DESC
  ON CONFLICT (org_id, workspace_id, month) DO UPDATE SET name = EXCLUDED.name, name_seen_at = EXCLUDED.name_seen_at
  WHERE workspace_months.name_seen_at <= EXCLUDED.name_seen_at
)
SELECT request_id FROM fresh`;

/**
 * Adds completed requests to their months' rollups in one statement. Idempotent on the generation
 * id. Returns the ids that were new (counted by this call).
 */
export async function countRequests(q: Queryable, requests: CountedRequest[], now: Date): Promise<Set<string>> {
  if (requests.length === 0) return new Set();
  const { rows } = await q.query<{ request_id: string }>(COUNT_REQUESTS, [JSON.stringify(requests), now.toISOString()], {
    prepare: true,
  });
  return new Set(rows.map((r) => r.request_id));
}

/** One stored rollup row of a workspace's month, its counters as decimal text. */
export type RollupRow = { dimension: "model" | "agent" | "day"; key: string } & Record<RollupCounter, string>;

/** Every rollup row of one workspace's month, and the name the workspace carried on its latest request then. */
export async function readMonth(
  q: Queryable,
  where: { orgId: string; workspaceId: string; month: string },
): Promise<{ rows: RollupRow[]; nameInMonth: string | null }> {
  const params = [where.orgId, where.workspaceId, where.month];
  const { rows } = await q.query<RollupRow>(
    // As text: PGlite returns bigint as a JS number, which is inexact past 2^53 (9M USD in nanodollars).
    `SELECT dimension, key, ${ROLLUP_COUNTERS.map((c) => `${c}::text AS ${c}`).join(", ")}
     FROM rollups WHERE org_id = $1 AND workspace_id = $2 AND month = $3`,
    params,
  );
  const named = await q.query<{ name: string }>(
    "SELECT name FROM workspace_months WHERE org_id = $1 AND workspace_id = $2 AND month = $3",
    params,
  );
  return { rows, nameInMonth: named.rows[0]?.name ?? null };
}
