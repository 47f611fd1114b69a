import type { Queryable } from "@router/db";
import type { Position } from "../paging/keyset";

/** A `conversations` row: one session of an organisation. */
export interface SessionRow {
  session_id: string;
  started_at: Date | string;
  last_seen_at: Date | string;
}

/** A session's requests within the window, summed. */
export interface SessionFigures {
  session_id: string;
  generations: bigint | string | number;
  errors: bigint | string | number;
  spend_nanodollars: bigint | string | number;
  tokens: bigint | string | number;
  models: string[] | null;
  providers: string[] | null;
}

/**
 * Up to `limit` sessions of one organisation active since `since`, most recently active first,
 * strictly after `position` (its `createdAt` is the last-seen time, its `id` the session id).
 */
export async function recentSessions(
  db: Queryable,
  orgId: string,
  since: Date | undefined,
  position: Position | undefined,
  limit: number,
): Promise<SessionRow[]> {
  const params: unknown[] = [orgId];
  const clauses = ["org_id = $1"];
  if (since) clauses.push(`last_seen_at >= $${params.push(since.toISOString())}::timestamptz`);
  if (position) {
    const at = params.push(position.createdAt.toISOString());
    const id = params.push(position.id);
    clauses.push(`(last_seen_at, session_id) < ($${at}::timestamptz, $${id})`);
  }
  const r = await db.query<SessionRow>(
    `SELECT session_id, started_at, last_seen_at FROM conversations WHERE ${clauses.join(" AND ")}
     ORDER BY last_seen_at DESC, session_id DESC LIMIT $${params.push(limit)}`,
    params,
  );
  return r.rows;
}

/**
 * What each of `sessionIds` did since `since` (every request when undefined): one page's sessions
 * only, through the (org, session, created_at) index. Spend is at list price.
 */
export async function sessionFigures(
  db: Queryable,
  orgId: string,
  sessionIds: string[],
  since: Date | undefined,
): Promise<Map<string, SessionFigures>> {
  if (sessionIds.length === 0) return new Map();
  const params: unknown[] = [orgId, sessionIds];
  const window = since ? `AND created_at >= $${params.push(since.toISOString())}::timestamptz` : "";
  const r = await db.query<SessionFigures>(
    `SELECT session_id, count(*) AS generations, count(*) FILTER (WHERE error_code IS NOT NULL) AS errors,
       sum(list_cost_nanodollars)::bigint AS spend_nanodollars, sum(prompt_tokens + completion_tokens)::bigint AS tokens,
       array_agg(DISTINCT served_model ORDER BY served_model) FILTER (WHERE served_model IS NOT NULL) AS models,
       array_agg(DISTINCT provider_slug ORDER BY provider_slug) FILTER (WHERE provider_slug IS NOT NULL) AS providers
     FROM requests
     WHERE org_id = $1 AND session_id = ANY($2::text[]) ${window}
     GROUP BY session_id`,
    params,
  );
  return new Map(r.rows.map((row) => [row.session_id, row]));
}
