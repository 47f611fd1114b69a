import type { Queryable } from "@router/db";
import type { Position } from "../paging/keyset";
import { Where } from "../paging/where";
import type { AttemptRow } from "./attempt-row";

export interface AttemptFilters {
  since?: Date;
  requestId?: string;
  provider?: string;
  status?: "ok" | "error";
}

/** Up to `limit` dispatches of one organisation, newest first, strictly after `position`. */
export async function listAttempts(
  db: Queryable,
  orgId: string,
  filters: AttemptFilters,
  position: Position | undefined,
  limit: number,
): Promise<AttemptRow[]> {
  const where = new Where(orgId)
    .since(filters.since)
    .addIf(filters.requestId, (p) => `request_id = ${p}`)
    .addIf(filters.provider, (p) => `provider_slug = ${p}`)
    .addIf(filters.status, (p) => `status = ${p}`)
    .after(position);
  const sql = `SELECT * FROM upstream_attempts ${where.clause()} ORDER BY created_at DESC, id DESC LIMIT ${where.param(limit)}`;
  return (await db.query<AttemptRow>(sql, where.params)).rows;
}
