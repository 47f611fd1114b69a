import { createHash } from "node:crypto";
import type { Queryable } from "@router/db";
import { toNanos, type Nanodollars } from "@router/money";
import { randomId } from "@router/random-tokens";

/** How long an authorization code may be exchanged after approval. */
export const PKCE_CODE_TTL_MS = 10 * 60_000;

/** What an approval fixed for the key its code will be exchanged for. */
export interface ApprovedCode {
  orgId: string;
  userId: string | null;
  workspaceId: string | null;
  callbackUrl: string | null;
  codeChallenge: string;
  keyLabel: string;
  limitNanos: Nanodollars;
  expiresInDays: number;
}

interface CodeRow {
  org_id: string;
  user_id: string | null;
  workspace_id: string | null;
  callback_url: string | null;
  code_challenge: string;
  key_label: string;
  limit_nanodollars: string | number | bigint;
  expires_in_days: number;
}

/** The SHA-256 of a code: the only form the database holds. */
export function pkceCodeHash(code: string): string {
  return createHash("sha256").update(code).digest("hex");
}

/** Stores an approval under a new code (256 bits from the CSPRNG) and returns the code, valid ten minutes. */
export async function insertPkceCode(q: Queryable, approved: ApprovedCode, now: Date): Promise<{ code: string; expiresAt: Date }> {
  const code = randomId(32, "base64url");
  const expiresAt = new Date(now.getTime() + PKCE_CODE_TTL_MS);
  await q.query(
    `INSERT INTO pkce_codes (code_hash, org_id, user_id, workspace_id, callback_url, code_challenge, key_label,
       limit_nanodollars, expires_in_days, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      pkceCodeHash(code),
      approved.orgId,
      approved.userId,
      approved.workspaceId,
      approved.callbackUrl,
      approved.codeChallenge,
      approved.keyLabel,
      approved.limitNanos.toString(),
      approved.expiresInDays,
      now,
      expiresAt,
    ],
  );
  return { code, expiresAt };
}

/**
 * Consumes a live code and returns its approval, or null when the code is unknown, already used or
 * expired. One conditional statement: of two exchanges racing with the same code exactly one gets
 * the row, and the code is gone whatever the caller does with the answer (a verifier that then does
 * not match has spent it).
 */
export async function consumePkceCode(q: Queryable, code: string, now: Date): Promise<ApprovedCode | null> {
  const r = await q.query<CodeRow>(
    `UPDATE pkce_codes SET consumed_at = $2
     WHERE code_hash = $1 AND consumed_at IS NULL AND expires_at > $2
     RETURNING org_id, user_id, workspace_id, callback_url, code_challenge, key_label, limit_nanodollars, expires_in_days`,
    [pkceCodeHash(code), now],
  );
  const row = r.rows[0];
  if (!row) return null;
  return {
    orgId: row.org_id,
    userId: row.user_id,
    workspaceId: row.workspace_id,
    callbackUrl: row.callback_url,
    codeChallenge: row.code_challenge,
    keyLabel: row.key_label,
    limitNanos: toNanos(row.limit_nanodollars),
    expiresInDays: Number(row.expires_in_days),
  };
}

/**
 * Withdraws the approvals a person gave in an organisation that no app has exchanged yet (their
 * seat is being removed: no key may come out of them afterwards).
 */
export async function withdrawPkceCodesOf(q: Queryable, orgId: string, userId: string): Promise<void> {
  await q.query("DELETE FROM pkce_codes WHERE org_id = $1 AND user_id = $2 AND consumed_at IS NULL", [orgId, userId]);
}
