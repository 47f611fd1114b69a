import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import type { Queryable } from "@router/db";
import { createLogger } from "@router/logging";
import { OpenTurns } from "../src/runs/open-turns";
import type { OpenTurnToTake } from "../src/runs/run-store";
import { openRunId, requestId, runTenant, startTestLedger, USD, workspaceId, type TestLedger } from "./ledger-fixture";

// The leased turns that arrive together are taken in one statement (take_open_turns), on the real
// ledger's database: each answer must be the one a statement of its own would give.

let l: TestLedger;
beforeAll(async () => {
  l = await startTestLedger({ label: "open_turns" });
});
afterAll(() => l.close());

/** The ledger's database, counting the statements sent through it. */
function counted(db: Queryable): Queryable & { statements: number } {
  const q = {
    statements: 0,
    query: ((sql, params, opts) => {
      q.statements++;
      return db.query(sql, params, opts);
    }) as Queryable["query"],
  };
  return q;
}

const openTurnsOn = (db: Queryable) => new OpenTurns({ db, log: createLogger({ level: "silent" }) });

/** An organisation with a spend lease on a workspace budget, and `runs` runs opened with `limits`. */
async function leasedRuns(runs: number, limits: Record<string, unknown> = {}) {
  const { org, agent } = runTenant();
  const ws = workspaceId();
  const budget = await l.http("PUT", `/v1/workspaces/${ws}/budgets/daily`, { orgId: org, workspace: ws }, { limit_usd: 4 });
  if (budget.status !== 200 && budget.status !== 201) throw new Error(`budget: ${budget.status}`);
  const held = await l.lease({ leaseId: `lease_${requestId()}`, orgId: org, workspaceId: ws, ceilings: [], isByok: true, wantNanodollars: USD, minNanodollars: 1n });
  const runIds: string[] = [];
  for (let i = 0; i < runs; i++) runIds.push(await openRunId(l, agent, { budget_usd: 1, ...limits }));
  const turn = (runId: string, extra: Partial<OpenTurnToTake> = {}): OpenTurnToTake => ({
    requestId: requestId(),
    orgId: org,
    runId,
    leaseHoldId: held.holdId,
    reserved: USD / 100n,
    admittedAt: l.clock.now(),
    expiresAt: new Date(l.clock.now().getTime() + 60_000),
    ...extra,
  });
  return { org, agent, held, runIds, turn };
}

async function runRow(runId: string): Promise<{ turns_used: number; reserved: string; turns: number[] }> {
  const run = await l.db.query<{ turns_used: number; reserved: string }>(
    `SELECT turns_used, reserved_nanodollars::text AS reserved FROM runs WHERE run_id = $1`,
    [runId],
  );
  const turns = await l.db.query<{ turn: number }>(`SELECT turn FROM run_turns WHERE run_id = $1 ORDER BY turn`, [runId]);
  return { ...run.rows[0]!, turns: turns.rows.map((t) => t.turn) };
}

describe("OpenTurns", () => {
  it("takes the turns of many runs sent at once in one statement a round, each run's turns numbered in order", async () => {
    const { runIds, turn } = await leasedRuns(8);
    const db = counted(l.db);
    const openTurns = openTurnsOn(db);

    // Three turns of each of eight runs, all at once: a run once a statement, so three statements.
    const turns = [0, 1, 2].flatMap(() => runIds.map((runId) => turn(runId)));
    const answers = await Promise.all(turns.map((t) => openTurns.take(t)));

    expect(answers).toEqual(turns.map(() => true));
    expect(db.statements).toBe(3);
    for (const runId of runIds) {
      expect(await runRow(runId)).toEqual({ turns_used: 3, reserved: String((3n * USD) / 100n), turns: [1, 2, 3] });
    }
    const order = await l.db.query<{ request_id: string; turn: number }>(`SELECT request_id, turn FROM run_turns WHERE run_id = $1`, [runIds[0]]);
    const numbered = new Map(order.rows.map((r) => [r.request_id, r.turn]));
    expect(turns.filter((t) => t.runId === runIds[0]).map((t) => numbered.get(t.requestId))).toEqual([1, 2, 3]);
  });

  it("refuses in a statement of many what a statement of its own refuses, and takes the rest", async () => {
    const limited = await leasedRuns(3, { max_turns: 1 });
    const [full, closed, fine] = limited.runIds as [string, string, string];
    const unlimited = await leasedRuns(1);
    const again = unlimited.runIds[0]!;
    const openTurns = openTurnsOn(l.db);
    const taken = unlimited.turn(again);
    expect(await openTurns.take(limited.turn(full))).toBe(true);
    expect(await openTurns.take(taken)).toBe(true);
    expect((await l.http("POST", `/v1/runs/${closed}/close`, limited.agent, { status: "cancelled" })).status).toBe(200);
    const other = await leasedRuns(1);
    const trimmed = await leasedRuns(1);
    await l.trim(trimmed.held.holdId);

    const db = counted(l.db);
    const together = openTurnsOn(db);
    const answers = await Promise.all(
      [
        limited.turn(full), // at its turn limit
        limited.turn(closed), // not open
        other.turn(other.runIds[0]!, { orgId: limited.org, leaseHoldId: limited.held.holdId }), // another organisation's run
        unlimited.turn(again, { requestId: taken.requestId }), // already a turn
        trimmed.turn(trimmed.runIds[0]!), // its lease no longer held
        limited.turn(fine),
      ].map((t) => together.take(t)),
    );

    expect(answers).toEqual([false, false, false, false, false, true]);
    // One statement for the six; then each of the five it did not take once more on its own (its
    // run might have been locked), refused there too.
    expect(db.statements).toBe(6);
    expect(await runRow(other.runIds[0]!)).toMatchObject({ turns_used: 0, turns: [] });
    expect(await runRow(full)).toEqual({ turns_used: 1, reserved: String(USD / 100n), turns: [1] });
    expect(await runRow(closed)).toMatchObject({ turns_used: 0, turns: [] });
    expect(await runRow(again)).toMatchObject({ turns_used: 1, turns: [1] });
    expect(await runRow(trimmed.runIds[0]!)).toMatchObject({ turns_used: 0, turns: [] });
    expect(await runRow(fine)).toEqual({ turns_used: 1, reserved: String(USD / 100n), turns: [1] });
  });

  it("takes each turn alone when another writer made one of them a turn meanwhile, keeping nothing of the failed statement", async () => {
    const { runIds, turn } = await leasedRuns(3);
    const [first, second, elsewhere] = runIds as [string, string, string];
    const raced = turn(first);
    const db = counted(l.db);
    const openTurns = openTurnsOn(db);
    let answers: Promise<boolean[]> | undefined;

    // The other writer's turn, not yet committed, holds the request id while the statement runs.
    await l.db.tx(async (q) => {
      await q.query(
        `INSERT INTO run_turns (request_id, run_id, turn, state, reserved_nanodollars, admitted_at, expires_at)
         VALUES ($1, $2, 1, 'admitted', 1, now(), now() + interval '1 minute')`,
        [raced.requestId, elsewhere],
      );
      answers = Promise.all([openTurns.take(raced), openTurns.take(turn(second))]);
      await sleep(300);
    });

    expect(await answers).toEqual([false, true]);
    // The statement of two failed; then each alone, and the one not taken once more.
    expect(db.statements).toBe(4);
    expect(await runRow(first)).toMatchObject({ turns_used: 0, reserved: "0", turns: [] });
    expect(await runRow(second)).toMatchObject({ turns_used: 1, turns: [1] });
  });

  it("takes a turn whose run another writer holds locked once that writer is done, on the run as it left it, without holding up other runs' turns", async () => {
    const { runIds, turn } = await leasedRuns(3);
    const [spentOn, paused, free] = runIds as [string, string, string];
    const db = counted(l.db);
    const openTurns = openTurnsOn(db);
    const answeredAt = new Map<string, number>();
    const timed = (runId: string) => openTurns.take(turn(runId)).then((taken) => (answeredAt.set(runId, performance.now()), taken));
    let answers: Promise<boolean[]> | undefined;
    let releasedAt = 0;

    await l.db.tx(async (q) => {
      await q.query(`SELECT 1 FROM runs WHERE run_id = ANY ($1) FOR UPDATE`, [[spentOn, paused]]);
      // One turn alone (`takeOpenTurn`); then, while its statement is in flight, two together
      // (take_open_turns). Neither statement waits for a locked run.
      const alone = timed(spentOn);
      await new Promise((resolve) => setImmediate(resolve));
      answers = Promise.all([alone, timed(paused), timed(free)]);
      // The other writer changes both runs before it lets go: a settlement's spend, a pause.
      await q.query(`UPDATE runs SET spent_nanodollars = spent_nanodollars + $2 WHERE run_id = $1`, [spentOn, String(USD / 10n)]);
      await q.query(`UPDATE runs SET status = 'paused', pause_reason = 'no_progress', paused_at = now() WHERE run_id = $1`, [paused]);
      await sleep(1_000);
      releasedAt = performance.now();
    });

    expect(await answers).toEqual([true, false, true]);
    // The free run's turn was not held up by the locked ones; theirs waited for the lock.
    expect(answeredAt.get(free)!).toBeLessThan(releasedAt);
    expect(answeredAt.get(spentOn)!).toBeGreaterThan(releasedAt);
    expect(answeredAt.get(paused)!).toBeGreaterThan(releasedAt);
    // The statement of one and the statement of two, then one of its own for each turn they did not take.
    expect(db.statements).toBe(4);
    expect(await runRow(spentOn)).toEqual({ turns_used: 1, reserved: String(USD / 100n), turns: [1] });
    expect(await runRow(paused)).toMatchObject({ turns_used: 0, reserved: "0", turns: [] });
    expect(await runRow(free)).toMatchObject({ turns_used: 1, turns: [1] });
  });
});
