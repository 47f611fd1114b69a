import type { Queryable } from "@router/db";
import { runaway } from "@router/management-api";

/** What a runaway flag does to a key: `alert` only (the default), or `pause` it too. */
export type RunawayAction = "alert" | "pause";

export const RUNAWAY_ACTIONS = runaway.RUNAWAY_ACTIONS;
export const DEFAULT_RUNAWAY_ACTION: RunawayAction = "alert";

export async function getRunawayAction(q: Queryable, orgId: string): Promise<RunawayAction> {
  const r = await q.query<{ runaway_action: RunawayAction }>("SELECT runaway_action FROM settings WHERE org_id = $1", [orgId]);
  return r.rows[0]?.runaway_action ?? DEFAULT_RUNAWAY_ACTION;
}

export async function setRunawayAction(q: Queryable, orgId: string, action: RunawayAction, now: Date): Promise<void> {
  await q.query(
    `INSERT INTO settings (org_id, runaway_action, updated_at) VALUES ($1, $2, $3)
     ON CONFLICT (org_id) DO UPDATE SET runaway_action = EXCLUDED.runaway_action, updated_at = EXCLUDED.updated_at`,
    [orgId, action, now],
  );
}
