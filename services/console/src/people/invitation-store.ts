import { createHash } from "node:crypto";
import type { Role } from "@router/access";
import type { Queryable } from "@router/db";
import { newId, randomId } from "@router/random-tokens";

/** How long an invitation link stays valid. */
export const INVITATION_TTL_MS = 7 * 24 * 3600_000;
/** Most open invitations one organisation may hold. */
export const MAX_OPEN_INVITATIONS = 50;

export interface Invitation {
  id: string;
  orgId: string;
  role: Role;
  createdAt: Date;
  expiresAt: Date;
  createdByName: string | null;
}

interface InvitationRow {
  id: string;
  org_id: string;
  role: Role;
  created_at: Date;
  expires_at: Date;
  created_by_name: string | null;
}

const fromRow = (r: InvitationRow): Invitation => ({
  id: r.id,
  orgId: r.org_id,
  role: r.role,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  createdByName: r.created_by_name,
});

const COLUMNS = "id, org_id, role, created_at, expires_at, created_by_name";
const OPEN = "accepted_at IS NULL AND revoked_at IS NULL";

export function invitationTokenHash(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export async function countOpenInvitations(q: Queryable, orgId: string, now: Date): Promise<number> {
  const r = await q.query<{ n: string | number }>(
    `SELECT count(*) AS n FROM invitations WHERE org_id = $1 AND ${OPEN} AND expires_at > $2`,
    [orgId, now],
  );
  return Number(r.rows[0]?.n ?? 0);
}

/** Creates an invitation; returns it with its token (256 bits), which is stored only as a hash. */
export async function insertInvitation(
  q: Queryable,
  input: { orgId: string; role: Role; createdByUser: string | null; createdByName: string | null; now: Date },
): Promise<{ invitation: Invitation; token: string }> {
  const token = randomId(32, "base64url");
  const r = await q.query<InvitationRow>(
    `INSERT INTO invitations (id, org_id, role, token_hash, created_by_user, created_by_name, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
    [
      newId("inv_"),
      input.orgId,
      input.role,
      invitationTokenHash(token),
      input.createdByUser,
      input.createdByName,
      input.now,
      new Date(input.now.getTime() + INVITATION_TTL_MS),
    ],
  );
  return { invitation: fromRow(r.rows[0]!), token };
}

/** Open invitations (not accepted, revoked or expired), newest first. */
export async function listOpenInvitations(q: Queryable, orgId: string, now: Date): Promise<Invitation[]> {
  const r = await q.query<InvitationRow>(
    `SELECT ${COLUMNS} FROM invitations WHERE org_id = $1 AND ${OPEN} AND expires_at > $2 ORDER BY created_at DESC, id`,
    [orgId, now],
  );
  return r.rows.map(fromRow);
}

/** Revokes an open invitation. `null`: the organisation has no such invitation; `false`: it was no longer open. */
export async function revokeInvitation(q: Queryable, orgId: string, id: string, now: Date): Promise<boolean | null> {
  const r = await q.query(
    `UPDATE invitations SET revoked_at = $3 WHERE org_id = $1 AND id = $2 AND ${OPEN} AND expires_at > $3`,
    [orgId, id, now],
  );
  if (r.rowCount === 1) return true;
  const exists = await q.query(`SELECT 1 FROM invitations WHERE org_id = $1 AND id = $2`, [orgId, id]);
  return exists.rows.length > 0 ? false : null;
}

/** The open invitation a token names, with its organisation's name; null for unknown, used, revoked or expired. */
export async function findOpenInvitation(
  q: Queryable,
  token: string,
  now: Date,
  opts: { forUpdate?: boolean } = {},
): Promise<(Invitation & { orgName: string }) | null> {
  const r = await q.query<InvitationRow & { org_name: string }>(
    `SELECT i.id, i.org_id, i.role, i.created_at, i.expires_at, i.created_by_name, o.name AS org_name
     FROM invitations i JOIN organisations o ON o.id = i.org_id
     WHERE i.token_hash = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > $2
     ${opts.forUpdate ? "FOR UPDATE OF i" : ""}`,
    [invitationTokenHash(token), now],
  );
  const row = r.rows[0];
  return row ? { ...fromRow(row), orgName: row.org_name } : null;
}

export async function markAccepted(q: Queryable, id: string, userId: string, now: Date): Promise<void> {
  await q.query(`UPDATE invitations SET accepted_at = $3, accepted_by = $2 WHERE id = $1`, [id, userId, now]);
}
