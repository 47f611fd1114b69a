import type { Db } from "@router/db";
import { toNanos, windowAt, type Nanodollars } from "@router/money";

/** A finished request (served or not) as its record (router.request.completed.v1) or a CloseHolds item reports it. */
export interface RequestUsage {
  requestId: string;
  orgId: string;
  /** '' for none. */
  workspaceId: string;
  agent: string;
  /** List price; 0 when nothing was served. */
  listCost: Nanodollars;
  isByok: boolean;
  /** When the ledger heard of it: the UTC day it counts in. */
  at: Date;
  /** Set when the request was a turn of a run: settled on its run in the same statement. */
  turn?: TurnSettlement;
}

/** How a turn ended, as its request's record tells it; its cost is the request's `listCost`. */
export interface TurnSettlement {
  runId: string;
  /** False for a failed turn: its money comes back, its turn does not. */
  served: boolean;
  model: string;
  finishReason: string;
  toolCalls: number;
  failedToolCalls: number;
  promptTokens: number;
  cachedTokens: number;
}

export type RecordingOutcome = "recorded" | "already_recorded";

/** The agents list is the last 31 days of agents seen, plus agents with a budget. */
export const AGENTS_SEEN_DAYS = 31;
export const MAX_AGENTS = 500;
const DAY_MS = 86_400_000;

export interface AgentActivity {
  agent: string;
  lastSeen: Date | null;
  requestsThisMonth: number;
  spendThisMonth: Nanodollars;
}

/**
 * Adds finished requests to usage_days, once per request id (a batch the gateway sends again
 * counts once), in one statement: rows are written in key order, so two replicas' batches never
 * wait on each other in a cycle. One outcome per item, in order.
 *
 * In the same statement, once per request, its credit hold (if any) is settled to the fee on its
 * actual list cost (`feeOf`, Router's fee, 0 while none is charged): the hold leaves `held`, the fee
 * leaves `total` (which may go negative: usage can exceed the worst case held). A hold the sweep
 * already charged (expired) has its charge given back and replaced by the fee.
 *
 * A batch with turns of runs among its requests settles them in the same statement too
 * (`settle_run_turns`, first, with the runs locked in id order): no statement or commit of their own.
 */
export async function recordRequests(
  db: Db,
  items: RequestUsage[],
  feeOf: (listCost: Nanodollars) => Nanodollars = () => 0n,
): Promise<RecordingOutcome[]> {
  if (items.length === 0) return [];
  const turns = items.some((i) => i.turn !== undefined);
  // With turns, `input` reads the settlement's one row, so it runs before any write of the statement.
  const r = await db.query<{ request_id: string }>(
    `WITH ${turns ? `${SETTLE_TURNS},` : ""} input AS (
       SELECT DISTINCT ON (t.request_id) t.*
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::boolean[], $7::timestamptz[], $8::bigint[])
         AS t (request_id, org_id, workspace_id, agent, list_cost, is_byok, at, fee)${turns ? ", settled_turns" : ""}
     ),
     fresh AS (
       INSERT INTO recorded_requests (request_id, recorded_at)
       SELECT request_id, at FROM input ORDER BY request_id
       ON CONFLICT (request_id) DO NOTHING
       RETURNING request_id
     ),
     summed AS (
       INSERT INTO usage_days AS u
         (org_id, workspace_id, agent, day, requests, list_spend_nanodollars, byok_list_spend_nanodollars, last_seen)
       SELECT i.org_id, i.workspace_id, i.agent, (i.at AT TIME ZONE 'UTC')::date, count(*), sum(i.list_cost),
              sum(CASE WHEN i.is_byok THEN i.list_cost ELSE 0 END), max(i.at)
       FROM input i JOIN fresh f USING (request_id)
       GROUP BY 1, 2, 3, 4
       ORDER BY 1, 2, 3, 4
       ON CONFLICT (org_id, workspace_id, agent, day) DO UPDATE
         SET requests = u.requests + EXCLUDED.requests,
             list_spend_nanodollars = u.list_spend_nanodollars + EXCLUDED.list_spend_nanodollars,
             byok_list_spend_nanodollars = u.byok_list_spend_nanodollars + EXCLUDED.byok_list_spend_nanodollars,
             last_seen = greatest(u.last_seen, EXCLUDED.last_seen)
     ),
     closed AS (
       DELETE FROM credit_holds h USING fresh f WHERE h.request_id = f.request_id
       RETURNING h.request_id, h.org_id, h.amount_nanodollars, h.expired
     ),
     credit_moves AS (
       SELECT org_id, sum(fee) AS fee, sum(unheld) AS unheld, sum(refund) AS refund, max(at) AS at FROM (
         SELECT i.org_id, i.fee, 0::bigint AS unheld, 0::bigint AS refund, i.at FROM input i JOIN fresh f USING (request_id) WHERE i.fee > 0
         UNION ALL
         SELECT c.org_id, 0, CASE WHEN c.expired THEN 0 ELSE c.amount_nanodollars END, CASE WHEN c.expired THEN c.amount_nanodollars ELSE 0 END, i.at
         FROM closed c JOIN input i USING (request_id)
       ) m
       GROUP BY org_id
     ),
     charged AS (
       INSERT INTO credit_balances AS b (org_id, total_nanodollars, updated_at)
       SELECT org_id, refund - fee, at FROM credit_moves ORDER BY org_id
       ON CONFLICT (org_id) DO UPDATE
         SET total_nanodollars = b.total_nanodollars + EXCLUDED.total_nanodollars,
             held_nanodollars = b.held_nanodollars - (SELECT m.unheld FROM credit_moves m WHERE m.org_id = EXCLUDED.org_id),
             updated_at = EXCLUDED.updated_at
       RETURNING b.org_id
     )
     SELECT request_id FROM fresh`,
    [
      items.map((i) => i.requestId),
      items.map((i) => i.orgId),
      items.map((i) => i.workspaceId),
      items.map((i) => i.agent),
      items.map((i) => i.listCost.toString()),
      items.map((i) => i.isByok),
      items.map((i) => i.at.toISOString()),
      items.map((i) => feeOf(i.listCost).toString()),
      ...(turns ? turnParams(items) : []),
    ],
    { prepare: true },
  );
  const fresh = new Set(r.rows.map((row) => row.request_id));
  // A request named twice in one batch is recorded by its first mention.
  const seen = new Set<string>();
  return items.map((i) => {
    const first = !seen.has(i.requestId);
    seen.add(i.requestId);
    return first && fresh.has(i.requestId) ? "recorded" : "already_recorded";
  });
}

/**
 * The turns' settlement as a CTE of recordRequests' statement: the requests' ids, organisations,
 * list costs and times are its $1, $2, $5 and $7; what only turns have is $9 on (`turnParams`).
 */
const SETTLE_TURNS = `settled_turns AS (
       SELECT settle_run_turns($1::text[], $2::text[], $9::text[], $10::boolean[], $5::bigint[], $11::text[], $12::text[],
         $13::int[], $14::int[], $15::bigint[], $16::bigint[], $7::timestamptz[]) AS settled
     )`;

/** One entry per item, NULL run id for a request that is no turn (the function skips it). */
function turnParams(items: RequestUsage[]): unknown[] {
  const turn = <T>(f: (t: TurnSettlement) => T) => items.map((i) => (i.turn ? f(i.turn) : null));
  return [
    turn((t) => t.runId),
    turn((t) => t.served),
    turn((t) => t.model),
    turn((t) => t.finishReason),
    turn((t) => t.toolCalls),
    turn((t) => t.failedToolCalls),
    turn((t) => t.promptTokens),
    turn((t) => t.cachedTokens),
  ];
}

/** Forgets which requests were recorded before `before` (a resend comes within minutes). */
export async function pruneRecordedRequests(db: Db, before: Date): Promise<number> {
  const r = await db.query("DELETE FROM recorded_requests WHERE recorded_at < $1::timestamptz", [before.toISOString()]);
  return r.rowCount;
}

/**
 * Each workspace's spend this UTC month: what its requests spent (list price, BYOK included) plus
 * the worst case the ledger still holds for its requests in flight. Workspaces with none read 0.
 */
export async function workspaceSpendThisMonth(
  db: Db,
  orgId: string,
  workspaceIds: string[],
  now: Date,
): Promise<Map<string, Nanodollars>> {
  const month = windowAt("monthly", now).start;
  const r = await db.query<{ workspace_id: string; spend: string | number | bigint }>(
    `SELECT workspace_id, sum(spend) AS spend FROM (
       SELECT workspace_id, list_spend_nanodollars AS spend FROM usage_days
       WHERE org_id = $1 AND workspace_id = ANY ($2::text[]) AND day >= $3::date
       UNION ALL
       SELECT workspace_id, greatest(worst_case_nanodollars - spent_nanodollars, 0) FROM holds
       WHERE state = 'held' AND org_id = $1 AND workspace_id = ANY ($2::text[]) AND created_at >= $4::timestamptz
     ) s
     GROUP BY workspace_id`,
    [orgId, workspaceIds, month.toISOString().slice(0, 10), month.toISOString()],
  );
  return new Map(r.rows.map((row) => [row.workspace_id, toNanos(row.spend)]));
}

/**
 * The agents of the organisation: every one seen in the last 31 days plus every one with a budget
 * (`budgeted`), most recently seen first (never-seen ones last, by name), at most 500. Requests and
 * spend are this UTC month's, list price.
 */
export async function agentActivity(db: Db, orgId: string, budgeted: string[], now: Date): Promise<AgentActivity[]> {
  const month = windowAt("monthly", now).start;
  const since = new Date(now.getTime() - AGENTS_SEEN_DAYS * DAY_MS);
  const r = await db.query<{
    agent: string;
    last_seen: Date | string | null;
    requests: string | number | null;
    spend: string | number | bigint | null;
  }>(
    `WITH recent AS (
       SELECT agent, max(last_seen) AS last_seen,
              sum(requests) FILTER (WHERE day >= $3::date) AS requests,
              sum(list_spend_nanodollars) FILTER (WHERE day >= $3::date) AS spend
       FROM usage_days
       WHERE org_id = $1 AND agent <> '' AND day >= least($3::date, $4::date)
       GROUP BY agent
     ),
     listed AS (
       SELECT agent FROM recent WHERE last_seen >= $5::timestamptz
       UNION
       SELECT unnest($2::text[])
     )
     SELECT l.agent,
            coalesce(r.last_seen, (SELECT max(u.last_seen) FROM usage_days u WHERE u.org_id = $1 AND u.agent = l.agent))
              AS last_seen,
            coalesce(r.requests, 0) AS requests, coalesce(r.spend, 0) AS spend
     FROM listed l LEFT JOIN recent r USING (agent)
     ORDER BY 2 DESC NULLS LAST, l.agent
     LIMIT ${MAX_AGENTS}`,
    [orgId, budgeted, month.toISOString().slice(0, 10), since.toISOString().slice(0, 10), since.toISOString()],
  );
  return r.rows.map((row) => ({
    agent: row.agent,
    lastSeen: row.last_seen === null ? null : new Date(row.last_seen),
    requestsThisMonth: Number(row.requests ?? 0),
    spendThisMonth: toNanos(row.spend ?? 0),
  }));
}
