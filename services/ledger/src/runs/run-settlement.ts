import type { Db } from "@router/db";
import { findRun, findTurn, saveRun } from "./run-store";

/*
 * A turn is settled on its run with its request's record, in the same statement (recordRequests,
 * src/usage/usage-store.ts, and settle_run_turns in migrations/repeatable): no statement of its own.
 */

/**
 * Takes the reservation of a turn never reported (a gateway that crashed) off its run, so it cannot
 * pin the run's budget; the turn stays counted. False when it was settled or expired meanwhile.
 */
export async function expireTurn(db: Db, t: { orgId: string; runId: string; requestId: string }, now: Date): Promise<boolean> {
  return db.tx(async (q) => {
    const run = await findRun(q, t.orgId, t.runId, true);
    const turn = run && (await findTurn(q, t.requestId));
    if (!run || !turn || turn.state !== "admitted") return false;
    const reserved = run.reserved - turn.reserved;
    await saveRun(q, { ...run, reserved: reserved > 0n ? reserved : 0n }, now);
    await q.query(`UPDATE run_turns SET state = 'expired' WHERE request_id = $1`, [t.requestId]);
    return true;
  });
}
