import type { Queryable } from "@router/db";
import { newId } from "@router/random-tokens";
import { slugify, withFreeSlug } from "./slugs";

/** Most workspaces one organisation may hold. */
export const MAX_WORKSPACES = 200;

export interface Workspace {
  id: string;
  name: string;
  slug: string;
  createdAt: Date;
  /** Keys of the workspace that are not revoked. */
  activeKeys: number;
}

interface WorkspaceRow {
  id: string;
  name: string;
  slug: string;
  created_at: Date;
  active_keys: string | number;
}

const SELECT = `SELECT w.id, w.name, w.slug, w.created_at,
  (SELECT count(*) FROM keys k WHERE k.workspace_id = w.id AND NOT k.disabled) AS active_keys
  FROM workspaces w`;

const fromRow = (r: WorkspaceRow): Workspace => ({
  id: r.id,
  name: r.name,
  slug: r.slug,
  createdAt: r.created_at,
  activeKeys: Number(r.active_keys),
});

export async function listWorkspaces(q: Queryable, orgId: string): Promise<Workspace[]> {
  const r = await q.query<WorkspaceRow>(`${SELECT} WHERE w.org_id = $1 ORDER BY w.created_at, w.id`, [orgId]);
  return r.rows.map(fromRow);
}

export async function getWorkspace(q: Queryable, orgId: string, id: string): Promise<Workspace | null> {
  const r = await q.query<WorkspaceRow>(`${SELECT} WHERE w.org_id = $1 AND w.id = $2`, [orgId, id]);
  return r.rows[0] ? fromRow(r.rows[0]) : null;
}

export async function countWorkspaces(q: Queryable, orgId: string): Promise<number> {
  const r = await q.query<{ n: string | number }>(`SELECT count(*) AS n FROM workspaces WHERE org_id = $1`, [orgId]);
  return Number(r.rows[0]?.n ?? 0);
}

/** Inserts a workspace; its slug is the name's, with a random suffix when the organisation already uses it. */
export async function insertWorkspace(q: Queryable, orgId: string, name: string, now: Date): Promise<string> {
  const id = newId("ws_");
  await withFreeSlug(slugify(name, "workspace"), async (slug) => {
    const r = await q.query(
      `INSERT INTO workspaces (id, org_id, name, slug, created_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (org_id, slug) DO NOTHING`,
      [id, orgId, name, slug, now],
    );
    return r.rowCount === 1;
  });
  return id;
}

export async function renameWorkspace(q: Queryable, orgId: string, id: string, name: string): Promise<boolean> {
  const r = await q.query(`UPDATE workspaces SET name = $3 WHERE org_id = $1 AND id = $2`, [orgId, id, name]);
  return r.rowCount === 1;
}

/** Removes a workspace with no active key: revoked keys keep their rows and lose the link. */
export async function deleteWorkspace(q: Queryable, orgId: string, id: string): Promise<void> {
  await q.query(`UPDATE keys SET workspace_id = NULL WHERE org_id = $1 AND workspace_id = $2 AND disabled`, [orgId, id]);
  await q.query(`DELETE FROM workspaces WHERE org_id = $1 AND id = $2`, [orgId, id]);
}
