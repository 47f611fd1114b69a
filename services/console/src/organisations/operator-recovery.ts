import type { Db } from "@router/db";
import type { Clock } from "@router/money";
import { mintKey } from "@router/api-keys";
import { insertKey } from "../keys/key-store";
import { defaultWorkspaceOf } from "./organisation-store";

export interface OrganisationSummary {
  id: string;
  name: string;
  slug: string;
  operator: boolean;
  createdAt: Date;
  members: number;
  activeManagementKeys: number;
}

/** `router org list`: every organisation of the installation, oldest first (operators only). */
export async function listOrganisations(db: Db): Promise<OrganisationSummary[]> {
  const r = await db.query<{
    id: string;
    name: string;
    slug: string;
    operator: boolean;
    created_at: Date;
    members: string | number;
    keys: string | number;
  }>(
    `SELECT o.id, o.name, o.slug, o.operator, o.created_at,
       (SELECT count(*) FROM members m WHERE m.org_id = o.id) AS members,
       (SELECT count(*) FROM keys k WHERE k.org_id = o.id AND k.class = 'management' AND NOT k.disabled) AS keys
     FROM organisations o ORDER BY o.created_at, o.id`,
  );
  return r.rows.map((row) => ({
    id: row.id,
    name: row.name,
    slug: row.slug,
    operator: row.operator,
    createdAt: row.created_at,
    members: Number(row.members),
    activeManagementKeys: Number(row.keys),
  }));
}

/**
 * `router key create --org <id>`: a new management key (no person behind it, so it acts as owner)
 * for an existing organisation, for an operator who lost theirs. Null when the organisation does
 * not exist. The plaintext is returned once; only its hash is stored.
 */
export async function mintManagementKey(
  db: Db,
  orgId: string,
  name: string,
  pepper: string,
  clock: Clock,
): Promise<{ key: string; hash: string } | null> {
  return db.tx(async (q) => {
    const org = await q.query(`SELECT 1 FROM organisations WHERE id = $1 FOR UPDATE`, [orgId]);
    if (org.rows.length === 0) return null;
    const minted = mintKey("management", pepper);
    const workspaceId = await defaultWorkspaceOf(q, orgId);
    await insertKey(
      q,
      orgId,
      minted,
      { name, workspaceId, limitNanos: null, limitReset: null, limitMode: "hard", includeByokInLimit: false },
      clock.now(),
    );
    return { key: minted.plaintext, hash: minted.hash };
  });
}
