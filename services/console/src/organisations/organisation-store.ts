import type { Queryable } from "@router/db";
import { newId } from "@router/random-tokens";
import { slugify, withFreeSlug } from "./slugs";
import { insertWorkspace } from "./workspace-store";

export interface NewOrganisation {
  orgId: string;
  workspaceId: string;
}

const DEFAULT_WORKSPACE_NAME = "Default";

/**
 * Inserts an organisation and its default workspace. The slug is the name's, with a random suffix
 * when another organisation already holds it. Call inside a transaction.
 */
export async function insertOrganisation(
  q: Queryable,
  input: { name: string; operator: boolean; now: Date },
): Promise<NewOrganisation> {
  const orgId = newId("org_");
  await withFreeSlug(slugify(input.name, "org"), async (slug) => {
    const r = await q.query(
      `INSERT INTO organisations (id, name, slug, operator, created_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (slug) DO NOTHING`,
      [orgId, input.name, slug, input.operator, input.now],
    );
    return r.rowCount === 1;
  });
  const workspaceId = await insertWorkspace(q, orgId, DEFAULT_WORKSPACE_NAME, input.now);
  return { orgId, workspaceId };
}

/** Whether `workspaceId` is a workspace of `orgId`; another organisation's id is simply not found. */
export async function workspaceBelongsTo(q: Queryable, orgId: string, workspaceId: string): Promise<boolean> {
  const r = await q.query(`SELECT 1 FROM workspaces WHERE id = $1 AND org_id = $2`, [workspaceId, orgId]);
  return r.rows.length > 0;
}

/** The organisation's first workspace: where keys go when neither the request nor the caller names one. */
export async function defaultWorkspaceOf(q: Queryable, orgId: string): Promise<string | null> {
  const r = await q.query<{ id: string }>(
    `SELECT id FROM workspaces WHERE org_id = $1 ORDER BY created_at, id LIMIT 1`,
    [orgId],
  );
  return r.rows[0]?.id ?? null;
}

export interface Organisation {
  id: string;
  name: string;
  slug: string;
  plan: string;
  operator: boolean;
  createdAt: Date;
  /** Active seats. */
  members: number;
}

export async function getOrganisation(q: Queryable, orgId: string): Promise<Organisation | null> {
  const r = await q.query<{ id: string; name: string; slug: string; plan: string; operator: boolean; created_at: Date; members: string | number }>(
    `SELECT o.id, o.name, o.slug, o.plan, o.operator, o.created_at,
            (SELECT count(*) FROM members m WHERE m.org_id = o.id) AS members
     FROM organisations o WHERE o.id = $1`,
    [orgId],
  );
  const row = r.rows[0];
  return row
    ? { id: row.id, name: row.name, slug: row.slug, plan: row.plan, operator: row.operator, createdAt: row.created_at, members: Number(row.members) }
    : null;
}

/** Renames an organisation; its id and slug never change. */
export async function renameOrganisation(q: Queryable, orgId: string, name: string): Promise<void> {
  await q.query(`UPDATE organisations SET name = $2 WHERE id = $1`, [orgId, name]);
}

/**
 * Serialises changes that check a count before they write (the last owner, the last workspace,
 * at most 200 workspaces), so two concurrent requests cannot both pass. Call inside a transaction.
 */
export async function lockOrganisation(q: Queryable, orgId: string): Promise<void> {
  await q.query(`SELECT 1 FROM organisations WHERE id = $1 FOR UPDATE`, [orgId]);
}
