import type { Db } from "@router/db";
import type { GroupCommit } from "../holds/group-commit";
import { findRun, findTurn, findTurns, lockRuns, saveRun, saveRuns, saveTurns, type Run } from "./run-store";
import { settleTurn } from "./run-turns";

/** How one turn ended, as its request's Settle (served) or Release (failed) carries it. */
export interface TurnReport {
  orgId: string;
  runId: string;
  requestId: string;
  served: boolean;
  /** List-price cost; 0 for a failed turn. */
  cost: bigint;
  model: string;
  finishReason: string;
  toolCalls: number;
  failedToolCalls: number;
  promptTokens: number;
  cachedTokens: number;
  /** When it was reported: the cost-velocity detector's minute, `settled_at`, `paused_at`. */
  at: Date;
}

export type TurnOutcome = "settled" | "already_settled" | "not_found";

/** Turn settlements, applied in batches (group commit) by `settleTurns`. */
export type TurnQueue = GroupCommit<TurnReport, TurnOutcome>;

/**
 * Settles turns on their runs in one transaction, runs locked in id order: the turn's reservation
 * comes off the run, a served turn's cost and tool calls are counted, and the run is exhausted or
 * paused when settlement says so (`settleTurn`). A turn settles once; the first report wins. One
 * answer per report, in order.
 */
export async function settleTurns(db: Db, reports: TurnReport[]): Promise<TurnOutcome[]> {
  return db.tx(async (q) => {
    // Four statements a batch, whatever its size: lock its runs, read its turns, write both back.
    const runs = await lockRuns(q, [...new Set(reports.map((r) => r.runId))].sort(compare));
    const turns = await findTurns(q, reports.map((r) => r.requestId));
    const settledRuns = new Map<string, { run: Run; now: Date }>();
    const settledTurns: Parameters<typeof saveTurns>[1] = [];
    const answers = reports.map((r): TurnOutcome => {
      const run = settledRuns.get(r.runId)?.run ?? runs.get(r.runId);
      const turn = turns.get(r.requestId);
      if (!run || run.orgId !== r.orgId || !turn || turn.runId !== run.id) return "not_found";
      if (turn.state === "served" || turn.state === "failed") return "already_settled";
      // An expired turn's reservation was already taken off by the sweep; a late report still counts.
      const reserved = turn.state === "admitted" ? turn.reserved : 0n;
      const next = settleTurn(run, reserved, { served: r.served, cost: r.cost, finishReason: r.finishReason, toolCalls: r.toolCalls }, r.at);
      settledRuns.set(run.id, { run: { ...run, ...next }, now: r.at });
      // Settled once: a second report of the same turn in this batch finds it so.
      turns.set(r.requestId, { ...turn, state: r.served ? "served" : "failed" });
      settledTurns.push({
        requestId: r.requestId,
        state: r.served ? "served" : "failed",
        cost: r.served ? r.cost : 0n,
        model: r.model,
        finishReason: r.finishReason,
        toolCalls: r.toolCalls,
        failedToolCalls: r.failedToolCalls,
        promptTokens: r.promptTokens,
        cachedTokens: r.cachedTokens,
        settledAt: r.at,
      });
      return "settled";
    });
    await saveRuns(q, [...settledRuns.values()]);
    await saveTurns(q, settledTurns);
    return answers;
  });
}

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

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
