import type { Db } from "@router/db";

/** What the CSV export reads of a request. */
export interface ExportRow {
  id: string;
  created_at: Date | string;
  workspace_id: string | null;
  workspace_name: string | null;
  key_name: string | null;
  requested_model: string;
  served_model: string | null;
  provider_slug: string | null;
  status: string;
  error_code: string | null;
  is_byok: boolean;
  prompt_tokens: number;
  completion_tokens: number;
  billed_cost_nanodollars: bigint | string | number;
  list_cost_nanodollars: bigint | string | number;
  agent: string | null;
}

/** One organisation's requests (or one workspace's) created in [from, to). */
export interface ExportScope {
  orgId: string;
  workspaceId?: string;
  from: Date;
  to: Date;
}

const COLUMNS = `id, created_at, workspace_id, workspace_name, key_name, requested_model, served_model, provider_slug,
  status, error_code, is_byok, prompt_tokens, completion_tokens, billed_cost_nanodollars, list_cost_nanodollars, agent`;

function scopeClause(scope: ExportScope, params: unknown[]): string {
  params.push(scope.orgId, scope.from.toISOString(), scope.to.toISOString());
  const clauses = ["org_id = $1", "created_at >= $2::timestamptz", "created_at < $3::timestamptz"];
  if (scope.workspaceId !== undefined) clauses.push(`workspace_id = $${params.push(scope.workspaceId)}`);
  return clauses.join(" AND ");
}

/**
 * At most `limit` rows of the scope, oldest first, in batches of `batchSize`, never all in memory.
 * On Postgres: one statement read through a cursor (one snapshot of the month). On embedded PGlite,
 * which has no cursor to offer (see `Db.cursor`): keyset pages on (created_at, id), each its own
 * short statement, so the other services of the process are served between pages.
 */
export function exportRows(db: Db, scope: ExportScope, limit: number, batchSize: number): AsyncIterable<ExportRow[]> {
  if (db.cursor) {
    const params: unknown[] = [];
    const where = scopeClause(scope, params);
    const sql = `SELECT ${COLUMNS} FROM requests WHERE ${where} ORDER BY created_at, id LIMIT $${params.push(limit)}`;
    return db.cursor<ExportRow>(sql, params, batchSize);
  }
  return keysetPages(db, scope, limit, batchSize);
}

async function* keysetPages(db: Db, scope: ExportScope, limit: number, batchSize: number): AsyncGenerator<ExportRow[]> {
  let after: { at: string; id: string } | undefined;
  let left = limit;
  while (left > 0) {
    const params: unknown[] = [];
    let where = scopeClause(scope, params);
    if (after) {
      const at = params.push(after.at);
      where += ` AND (created_at, id) > ($${at}::timestamptz, $${params.push(after.id)})`;
    }
    const take = Math.min(batchSize, left);
    const sql = `SELECT ${COLUMNS} FROM requests WHERE ${where} ORDER BY created_at, id LIMIT $${params.push(take)}`;
    const { rows } = await db.query<ExportRow>(sql, params);
    if (rows.length > 0) yield rows;
    const last = rows[rows.length - 1];
    if (rows.length < take || !last) return;
    left -= rows.length;
    // created_at holds whole milliseconds (events carry them so), so a JS Date keeps it exactly.
    after = { at: new Date(last.created_at).toISOString(), id: last.id };
  }
}
