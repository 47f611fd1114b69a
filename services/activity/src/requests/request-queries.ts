import type { Queryable } from "@router/db";
import type { Position } from "../paging/keyset";
import { Where } from "../paging/where";
import type { AttemptRow } from "../upstream/attempt-row";
import type { RequestRow } from "./request-row";

export interface RequestFilters {
  since?: Date;
  servedModel?: string;
  provider?: string;
  workspaceId?: string;
  agent?: string;
  status?: string;
  byok?: boolean;
  appId?: string;
  keyHash?: string;
}

/** Up to `limit` request rows of one organisation, newest first, strictly after `position`. */
export async function listRequests(
  db: Queryable,
  orgId: string,
  filters: RequestFilters,
  position: Position | undefined,
  limit: number,
): Promise<RequestRow[]> {
  const where = new Where(orgId)
    .since(filters.since)
    .addIf(filters.servedModel, (p) => `served_model = ${p}`)
    .addIf(filters.provider, (p) => `provider_slug = ${p}`)
    .addIf(filters.workspaceId, (p) => `workspace_id = ${p}`)
    .addIf(filters.agent, (p) => `agent = ${p}`)
    .addIf(filters.status, (p) => `status = ${p}`)
    .addIf(filters.byok, (p) => `is_byok = ${p}`)
    .addIf(filters.appId, (p) => `app_id = ${p}`)
    .addIf(filters.keyHash, (p) => `key_hash = ${p}`)
    .after(position);
  const sql = `SELECT * FROM requests ${where.clause()} ORDER BY created_at DESC, id DESC LIMIT ${where.param(limit)}`;
  return (await db.query<RequestRow>(sql, where.params)).rows;
}

/** One request of one organisation; another organisation's id finds nothing. */
export async function findRequest(db: Queryable, orgId: string, id: string): Promise<RequestRow | undefined> {
  const r = await db.query<RequestRow>("SELECT * FROM requests WHERE org_id = $1 AND id = $2", [orgId, id]);
  return r.rows[0];
}

/** Every dispatch made for one request, in cascade order. */
export async function attemptsOfRequest(db: Queryable, orgId: string, requestId: string): Promise<AttemptRow[]> {
  const r = await db.query<AttemptRow>(
    "SELECT * FROM upstream_attempts WHERE org_id = $1 AND request_id = $2 ORDER BY attempt, created_at, id",
    [orgId, requestId],
  );
  return r.rows;
}
