import type { Role } from "@router/access";
import type { Queryable } from "@router/db";
import { toNanos, type WindowKind } from "@router/money";
import type { KeyClass, KeyRecord, MintedKey } from "@router/api-keys";

/** A key as stored: what authentication reads, plus the lifecycle columns. */
export interface StoredKey extends KeyRecord {
  externalUser: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface KeySettings {
  name: string | null;
  workspaceId: string | null;
  limitNanos: bigint | null;
  limitReset: WindowKind | null;
  limitMode: "hard" | "soft";
  includeByokInLimit: boolean;
  expiresAt?: Date | null;
  externalUser?: string | null;
  /** The person the key belongs to (see `StoredKey.userId`). */
  userId?: string | null;
  /** Overrides the label minted from the secret (a PKCE key is labelled by its app). */
  label?: string;
}

/** Fields an update may change; absent means unchanged. Class, name and secret never change. */
export interface KeyChanges {
  limitNanos?: bigint | null;
  limitReset?: WindowKind | null;
  limitMode?: "hard" | "soft";
  includeByokInLimit?: boolean;
  workspaceId?: string;
  paused?: boolean;
}

interface KeyRow {
  hash: string;
  prefix: string;
  org_id: string;
  operator: boolean;
  workspace_id: string | null;
  workspace_name: string | null;
  name: string | null;
  label: string | null;
  class: KeyClass;
  limit_nanodollars: string | number | bigint | null;
  limit_reset: WindowKind | null;
  limit_mode: "hard" | "soft";
  include_byok_in_limit: boolean;
  paused: boolean;
  paused_reason: "runaway" | "manual" | null;
  disabled: boolean;
  expires_at: Date | null;
  external_user: string | null;
  created_at: Date;
  updated_at: Date;
  user_id: string | null;
  user_role: Role | null;
}

const SELECT_KEY = `SELECT k.hash, k.prefix, k.org_id, o.operator, k.workspace_id, k.name, k.label, k.class,
  k.limit_nanodollars, k.limit_reset, k.limit_mode, k.include_byok_in_limit, k.paused, k.paused_reason,
  k.disabled, k.expires_at, k.external_user, k.created_at, k.updated_at, k.user_id, m.role AS user_role,
  w.name AS workspace_name
  FROM keys k JOIN organisations o ON o.id = k.org_id
  LEFT JOIN workspaces w ON w.id = k.workspace_id
  LEFT JOIN members m ON m.org_id = k.org_id AND m.user_id = k.user_id`;

function fromRow(r: KeyRow): StoredKey {
  return {
    hash: r.hash,
    prefix: r.prefix,
    orgId: r.org_id,
    operator: r.operator,
    workspaceId: r.workspace_id,
    workspaceName: r.workspace_name,
    name: r.name,
    label: r.label,
    class: r.class,
    limitNanos: r.limit_nanodollars === null ? null : toNanos(r.limit_nanodollars),
    limitReset: r.limit_reset,
    limitMode: r.limit_mode,
    includeByokInLimit: r.include_byok_in_limit,
    paused: r.paused,
    pausedReason: r.paused_reason,
    disabled: r.disabled,
    expiresAt: r.expires_at,
    externalUser: r.external_user,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    userId: r.user_id,
    userRole: r.user_role,
  };
}

export async function insertKey(
  q: Queryable,
  orgId: string,
  minted: MintedKey,
  settings: KeySettings,
  now: Date,
): Promise<void> {
  await q.query(
    `INSERT INTO keys (hash, prefix, org_id, workspace_id, name, label, class, limit_nanodollars, limit_reset,
       limit_mode, include_byok_in_limit, expires_at, external_user, user_id, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15)`,
    [
      minted.hash,
      minted.prefix,
      orgId,
      settings.workspaceId,
      settings.name,
      settings.label ?? minted.label,
      minted.class,
      settings.limitNanos?.toString() ?? null,
      settings.limitReset,
      settings.limitMode,
      settings.includeByokInLimit,
      settings.expiresAt ?? null,
      settings.externalUser ?? null,
      settings.userId ?? null,
      now,
    ],
  );
}

/** Any key by hash, whatever its organisation or state: the authentication lookup. */
export async function findKeyByHash(q: Queryable, hash: string): Promise<StoredKey | null> {
  const r = await q.query<KeyRow>(`${SELECT_KEY} WHERE k.hash = $1`, [hash]);
  const row = r.rows[0];
  return row ? fromRow(row) : null;
}

/** One key of one organisation; another organisation's hash is not found. */
export async function getKey(q: Queryable, orgId: string, hash: string): Promise<StoredKey | null> {
  const r = await q.query<KeyRow>(`${SELECT_KEY} WHERE k.hash = $1 AND k.org_id = $2`, [hash, orgId]);
  const row = r.rows[0];
  return row ? fromRow(row) : null;
}

export async function listKeys(q: Queryable, orgId: string, includeDisabled: boolean): Promise<StoredKey[]> {
  const r = await q.query<KeyRow>(
    `${SELECT_KEY} WHERE k.org_id = $1 AND ($2 OR NOT k.disabled) ORDER BY k.created_at DESC, k.hash`,
    [orgId, includeDisabled],
  );
  return r.rows.map(fromRow);
}

/**
 * Applies `changes` to a live key of the organisation and returns it, or null when the organisation
 * has no such live key (unknown or revoked).
 * Pausing by hand records `manual`; resuming clears the reason whatever paused it.
 */
export async function updateKey(
  q: Queryable,
  orgId: string,
  hash: string,
  changes: KeyChanges,
  now: Date,
): Promise<StoredKey | null> {
  const sets: string[] = [];
  const params: unknown[] = [hash, orgId, now];
  const set = (column: string, value: unknown) => {
    params.push(value);
    sets.push(`${column} = $${params.length}`);
  };
  if (changes.limitNanos !== undefined) set("limit_nanodollars", changes.limitNanos?.toString() ?? null);
  if (changes.limitReset !== undefined) set("limit_reset", changes.limitReset);
  if (changes.limitMode !== undefined) set("limit_mode", changes.limitMode);
  if (changes.includeByokInLimit !== undefined) set("include_byok_in_limit", changes.includeByokInLimit);
  if (changes.workspaceId !== undefined) set("workspace_id", changes.workspaceId);
  if (changes.paused !== undefined) {
    set("paused", changes.paused);
    // Pausing a key a runaway flag already paused keeps that reason; the SET reads the old row.
    sets.push(
      changes.paused ? "paused_reason = CASE WHEN paused THEN COALESCE(paused_reason, 'manual') ELSE 'manual' END" : "paused_reason = NULL",
    );
  }
  const r = await q.query<{ hash: string }>(
    `UPDATE keys SET ${[...sets, "updated_at = $3"].join(", ")} WHERE hash = $1 AND org_id = $2 AND NOT disabled RETURNING hash`,
    params,
  );
  if (r.rows.length === 0) return null;
  return getKey(q, orgId, hash);
}

/** Revokes a key of the organisation; returns false when the organisation has no such key. */
export async function revokeKey(q: Queryable, orgId: string, hash: string, now: Date): Promise<boolean> {
  const r = await q.query(
    `UPDATE keys SET disabled = true, updated_at = CASE WHEN disabled THEN updated_at ELSE $3 END
     WHERE hash = $1 AND org_id = $2`,
    [hash, orgId, now],
  );
  return r.rowCount > 0;
}

/** Which of `hashes` are not keys of the organisation (unknown and another organisation's look the same). */
export async function foreignKeyHashes(q: Queryable, orgId: string, hashes: readonly string[]): Promise<string[]> {
  if (hashes.length === 0) return [];
  const r = await q.query<{ hash: string }>(`SELECT hash FROM keys WHERE org_id = $1 AND hash = ANY($2::text[])`, [orgId, hashes]);
  const known = new Set(r.rows.map((row) => row.hash));
  return hashes.filter((h) => !known.has(h));
}
