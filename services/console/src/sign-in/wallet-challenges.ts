import type { Queryable } from "@router/db";

/** A wallet sign-in challenge lasts five minutes. */
export const WALLET_CHALLENGE_TTL_MS = 5 * 60_000;

export interface WalletChallenge {
  nonce: string;
  /** Lower-case hex address. */
  address: string;
  message: string;
  expiresAt: Date;
}

export async function insertChallenge(q: Queryable, c: WalletChallenge, now: Date): Promise<void> {
  await q.query(
    `INSERT INTO wallet_challenges (nonce, address, message, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
    [c.nonce, c.address, c.message, now, c.expiresAt],
  );
}

/**
 * Uses up a challenge: the nonce is single use, consumed at lookup whether or not the signature
 * then verifies. Null when it is unknown or already used; an expired one is returned (and spent)
 * so the caller can say so.
 */
export async function consumeChallenge(q: Queryable, nonce: string, now: Date): Promise<WalletChallenge | null> {
  const r = await q.query<{ nonce: string; address: string; message: string; expires_at: Date }>(
    `UPDATE wallet_challenges SET used_at = $2 WHERE nonce = $1 AND used_at IS NULL
     RETURNING nonce, address, message, expires_at`,
    [nonce, now],
  );
  const row = r.rows[0];
  return row ? { nonce: row.nonce, address: row.address, message: row.message, expiresAt: row.expires_at } : null;
}
