import { randomBytes } from "node:crypto";
import type { Queryable } from "@router/db";
import { newId } from "../random-tokens";

export interface NewOrganisation {
  orgId: string;
  workspaceId: string;
}

const DEFAULT_WORKSPACE_NAME = "Default";

/** A URL-safe slug from a display name; falls back to `org` when nothing usable is left. */
export function slugify(name: string): string {
  const slug = name
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/g, "");
  return slug || "org";
}

/**
 * Inserts an organisation and its default workspace. The slug is the name's, with a random suffix
 * when another organisation already holds it. Call inside a transaction.
 */
export async function insertOrganisation(
  q: Queryable,
  input: { name: string; operator: boolean; now: Date },
): Promise<NewOrganisation> {
  const orgId = newId("org_");
  const base = slugify(input.name);
  let slug = base;
  for (let attempt = 0; ; attempt++) {
    const r = await q.query(
      `INSERT INTO organisations (id, name, slug, operator, created_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (slug) DO NOTHING`,
      [orgId, input.name, slug, input.operator, input.now],
    );
    if (r.rowCount === 1) break;
    if (attempt >= 5) throw new Error("could not find a free organisation slug");
    slug = `${base}-${randomBytes(3).toString("hex")}`;
  }
  const workspaceId = newId("ws_");
  await q.query(`INSERT INTO workspaces (id, org_id, name, slug, created_at) VALUES ($1, $2, $3, $4, $5)`, [
    workspaceId,
    orgId,
    DEFAULT_WORKSPACE_NAME,
    "default",
    input.now,
  ]);
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
