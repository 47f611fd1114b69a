import type { Queryable } from "@router/db";

export type PauseResult = "paused" | "unchanged" | "duplicate";

// One statement: the flag is recorded as applied, and only a flag not seen before pauses its key,
// when the key belongs to the flag's organisation, is not revoked and is not paused already (a key
// paused by hand stays `manual`; the product's pause rule pauses an active key only).
const APPLY_FLAG = `WITH applied AS (
  INSERT INTO runaway_pauses (flag_id, org_id, key_hash, applied_at) VALUES ($1, $2, $3, $4)
  ON CONFLICT (flag_id) DO NOTHING
  RETURNING flag_id
), paused AS (
  UPDATE keys SET paused = true, paused_reason = 'runaway', updated_at = $4
  WHERE hash = $3 AND org_id = $2 AND NOT disabled AND NOT paused AND EXISTS (SELECT 1 FROM applied)
  RETURNING hash
)
SELECT (SELECT count(*) FROM applied)::int AS applied, (SELECT count(*) FROM paused)::int AS paused`;

/** Pauses the key a runaway flag names (`paused_reason` `runaway`), once per flag id; see APPLY_FLAG. */
export async function applyRunawayFlag(q: Queryable, flag: { flagId: string; orgId: string; keyHash: string }, now: Date): Promise<PauseResult> {
  const r = await q.query<{ applied: number; paused: number }>(APPLY_FLAG, [flag.flagId, flag.orgId, flag.keyHash, now]);
  const row = r.rows[0];
  if (!row || row.applied === 0) return "duplicate";
  return row.paused > 0 ? "paused" : "unchanged";
}
