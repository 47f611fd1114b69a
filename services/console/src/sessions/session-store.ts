import type { AuthMethod, Role, SessionRecord } from "@router/access";
import type { Queryable } from "@router/db";
import { randomId } from "@router/random-tokens";

export type { AuthMethod } from "@router/access";

/** How long a dashboard session lasts from sign-in (docs/adr, ADR 0013). */
export const SESSION_TTL_MS = 7 * 24 * 3600_000;

/** A session as stored: what authentication reads (the row joined with the seat and key behind it), and when it began. */
export interface StoredSession extends SessionRecord {
  createdAt: Date;
}

interface SessionRow {
  token_hash: string;
  org_id: string;
  operator: boolean;
  user_id: string | null;
  key_hash: string | null;
  auth_method: AuthMethod;
  created_at: Date;
  expires_at: Date;
  ended_at: Date | null;
  seat_role: Role | null;
  key_name: string | null;
  key_workspace_id: string | null;
  key_disabled: boolean | null;
  charge_workspace_id: string | null;
  charge_workspace_name: string | null;
}

/** A new session token: 256 bits from the CSPRNG. */
export function newSessionToken(): string {
  return randomId(32, "base64url");
}

export async function insertSession(
  q: Queryable,
  s: { tokenHash: string; orgId: string; userId: string | null; keyHash: string | null; authMethod: AuthMethod; now: Date; expiresAt: Date },
): Promise<void> {
  await q.query(
    `INSERT INTO sessions (token_hash, org_id, user_id, key_hash, auth_method, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [s.tokenHash, s.orgId, s.userId, s.keyHash, s.authMethod, s.now, s.expiresAt],
  );
}

export async function findSession(q: Queryable, tokenHash: string): Promise<StoredSession | null> {
  const r = await q.query<SessionRow>(
    `SELECT s.token_hash, s.org_id, o.operator, s.user_id, s.key_hash, s.auth_method, s.created_at, s.expires_at,
            s.ended_at, m.role AS seat_role, k.name AS key_name, k.workspace_id AS key_workspace_id,
            k.disabled AS key_disabled, cw.id AS charge_workspace_id, cw.name AS charge_workspace_name
     FROM sessions s
     JOIN organisations o ON o.id = s.org_id
     LEFT JOIN members m ON m.org_id = s.org_id AND m.user_id = s.user_id
     LEFT JOIN keys k ON k.hash = s.key_hash
     LEFT JOIN LATERAL (
       SELECT w.id, w.name FROM workspaces w
       WHERE w.org_id = s.org_id
       ORDER BY (w.id IS NOT DISTINCT FROM k.workspace_id) DESC, w.created_at, w.id
       LIMIT 1
     ) cw ON true
     WHERE s.token_hash = $1`,
    [tokenHash],
  );
  const row = r.rows[0];
  if (!row) return null;
  return {
    tokenHash: row.token_hash,
    orgId: row.org_id,
    operator: row.operator,
    userId: row.user_id,
    keyHash: row.key_hash,
    authMethod: row.auth_method,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    endedAt: row.ended_at,
    seatRole: row.seat_role,
    keyName: row.key_name,
    keyWorkspaceId: row.key_workspace_id,
    keyDisabled: row.key_disabled === true,
    chargeWorkspaceId: row.charge_workspace_id,
    chargeWorkspaceName: row.charge_workspace_name,
  };
}

/** Ends the sessions that `where` selects and returns their token hashes (for cache eviction). */
async function endWhere(q: Queryable, where: string, params: unknown[], now: Date): Promise<string[]> {
  const r = await q.query<{ token_hash: string }>(
    `UPDATE sessions SET ended_at = $1 WHERE ended_at IS NULL AND expires_at > $1 AND ${where} RETURNING token_hash`,
    [now, ...params],
  );
  return r.rows.map((row) => row.token_hash);
}

export function endSession(q: Queryable, tokenHash: string, now: Date): Promise<string[]> {
  return endWhere(q, "token_hash = $2", [tokenHash], now);
}

/** Every live session a key was exchanged for (the key is being revoked). */
export function endSessionsOfKey(q: Queryable, keyHash: string, now: Date): Promise<string[]> {
  return endWhere(q, "key_hash = $2", [keyHash], now);
}

/** Every live session of a person in one organisation (their seat was removed). */
export function endSessionsOfMember(q: Queryable, orgId: string, userId: string, now: Date): Promise<string[]> {
  return endWhere(q, "org_id = $2 AND user_id = $3", [orgId, userId], now);
}

/** Live sessions of a person in one organisation, without ending them (their role changed). */
export async function sessionsOfMember(q: Queryable, orgId: string, userId: string, now: Date): Promise<string[]> {
  const r = await q.query<{ token_hash: string }>(
    `SELECT token_hash FROM sessions WHERE org_id = $1 AND user_id = $2 AND ended_at IS NULL AND expires_at > $3`,
    [orgId, userId, now],
  );
  return r.rows.map((row) => row.token_hash);
}
