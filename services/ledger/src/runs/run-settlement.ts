import type { Db, Queryable } from "@router/db";
import type { GroupCommit } from "../holds/group-commit";
import { findRun, findTurn, saveRun, saveTurn } from "./run-store";
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
  const order = reports.map((_, i) => i).sort((a, b) => compare(reports[a]?.runId ?? "", reports[b]?.runId ?? ""));
  return db.tx(async (q) => {
    const answers: TurnOutcome[] = new Array<TurnOutcome>(reports.length).fill("not_found");
    for (const i of order) {
      const report = reports[i];
      if (report) answers[i] = await settleOne(q, report);
    }
    return answers;
  });
}

async function settleOne(q: Queryable, r: TurnReport): Promise<TurnOutcome> {
  const run = await findRun(q, r.orgId, r.runId, true);
  const turn = run && (await findTurn(q, r.requestId));
  if (!run || !turn || turn.runId !== run.id) return "not_found";
  if (turn.state === "served" || turn.state === "failed") return "already_settled";
  // An expired turn's reservation was already taken off by the sweep; a late report still counts.
  const reserved = turn.state === "admitted" ? turn.reserved : 0n;
  const next = settleTurn(run, reserved, { served: r.served, cost: r.cost, finishReason: r.finishReason, toolCalls: r.toolCalls }, r.at);
  await saveRun(q, { ...run, ...next }, r.at);
  await saveTurn(q, r.requestId, {
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
