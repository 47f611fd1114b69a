import type { Role } from "@router/access";
import type { Queryable } from "@router/db";

export interface Member {
  userId: string;
  role: Role;
  joinedAt: Date;
  name: string | null;
  email: string | null;
  avatarUrl: string | null;
  provider: string | null;
}

interface MemberRow {
  user_id: string;
  role: Role;
  joined_at: Date;
  name: string | null;
  email: string | null;
  avatar_url: string | null;
  provider: string | null;
}

/** The organisation's seats, owners first, then by when they joined. */
export async function listMembers(q: Queryable, orgId: string): Promise<Member[]> {
  const r = await q.query<MemberRow>(
    `SELECT m.user_id, m.role, m.joined_at, u.name, u.email, u.avatar_url, u.provider
     FROM members m JOIN users u ON u.id = m.user_id
     WHERE m.org_id = $1
     ORDER BY (m.role = 'owner') DESC, m.joined_at, m.user_id`,
    [orgId],
  );
  return r.rows.map((row) => ({
    userId: row.user_id,
    role: row.role,
    joinedAt: row.joined_at,
    name: row.name,
    email: row.email,
    avatarUrl: row.avatar_url,
    provider: row.provider,
  }));
}

export async function memberRole(q: Queryable, orgId: string, userId: string): Promise<Role | null> {
  const r = await q.query<{ role: Role }>(`SELECT role FROM members WHERE org_id = $1 AND user_id = $2`, [orgId, userId]);
  return r.rows[0]?.role ?? null;
}

/** Takes a seat; false when the person already holds one in the organisation. */
export async function insertMember(q: Queryable, orgId: string, userId: string, role: Role, now: Date): Promise<boolean> {
  const r = await q.query(
    `INSERT INTO members (org_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
    [orgId, userId, role, now],
  );
  return r.rowCount === 1;
}

export async function ownerCount(q: Queryable, orgId: string): Promise<number> {
  const r = await q.query<{ n: string | number }>(`SELECT count(*) AS n FROM members WHERE org_id = $1 AND role = 'owner'`, [orgId]);
  return Number(r.rows[0]?.n ?? 0);
}

export async function setMemberRole(q: Queryable, orgId: string, userId: string, role: Role): Promise<void> {
  await q.query(`UPDATE members SET role = $3 WHERE org_id = $1 AND user_id = $2`, [orgId, userId, role]);
}

export async function deleteMember(q: Queryable, orgId: string, userId: string): Promise<void> {
  await q.query(`DELETE FROM members WHERE org_id = $1 AND user_id = $2`, [orgId, userId]);
}

/**
 * Revokes every key a person holds in an organisation (their seat is gone): the management keys they
 * made and the inference keys they made or approved through PKCE. Returns their hashes.
 */
export async function revokeKeysOfMember(q: Queryable, orgId: string, userId: string, now: Date): Promise<string[]> {
  const r = await q.query<{ hash: string }>(
    `UPDATE keys SET disabled = true, updated_at = $3 WHERE org_id = $1 AND user_id = $2 AND NOT disabled RETURNING hash`,
    [orgId, userId, now],
  );
  return r.rows.map((row) => row.hash);
}

/** The keys a person holds in an organisation (their role changed or seat went: the auth caches must forget them). */
export async function keysOfMember(q: Queryable, orgId: string, userId: string): Promise<string[]> {
  const r = await q.query<{ hash: string }>(`SELECT hash FROM keys WHERE org_id = $1 AND user_id = $2`, [orgId, userId]);
  return r.rows.map((row) => row.hash);
}

export interface Membership {
  orgId: string;
  name: string;
  role: Role;
  joinedAt: Date;
}

/** Every organisation a person holds a seat in, oldest seat first. */
export async function membershipsOf(q: Queryable, userId: string): Promise<Membership[]> {
  const r = await q.query<{ org_id: string; name: string; role: Role; joined_at: Date }>(
    `SELECT m.org_id, o.name, m.role, m.joined_at FROM members m JOIN organisations o ON o.id = m.org_id
     WHERE m.user_id = $1 ORDER BY m.joined_at, m.org_id`,
    [userId],
  );
  return r.rows.map((row) => ({ orgId: row.org_id, name: row.name, role: row.role, joinedAt: row.joined_at }));
}
