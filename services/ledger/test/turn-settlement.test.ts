import type { Db } from "@router/db";
import { recordRequests, type RequestUsage, type TurnSettlement } from "../src/usage/usage-store";
import { openRunId, orgId, requestId, runTenant, startTestLedger, USD, type Caller, type TestLedger } from "./ledger-fixture";

/**
 * Turns settled with their requests' records, in the statement that records them (recordRequests
 * and settle_run_turns), on real Postgres: the settlement's rules, batches with several turns of
 * one run, and the cost (one statement, no transaction).
 */
let l: TestLedger;
beforeAll(async () => {
  l = await startTestLedger({ label: "turn_settlement" });
});
afterAll(() => l.close());

const at = (time: string) => new Date(`2026-11-18T${time}Z`);

const tenant = runTenant;
const openRun = (agent: Caller, body: Record<string, unknown>) => openRunId(l, agent, body);

const getRun = async (agent: Caller, id: string) => (await l.http("GET", `/v1/runs/${id}`, agent)).json.data as Record<string, any>;

/** Admits a turn of the run reserving `worstCase`; answers its request id. */
async function admitted(org: string, runId: string, worstCase: bigint): Promise<string> {
  const id = requestId();
  const a = await l.admit({ requestId: id, orgId: org, runId, worstCaseNanodollars: worstCase, isByok: true });
  expect(a.admitted).toBe(true);
  return id;
}

/** A finished request that was a turn: served with `cost` (a number) or failed (null). */
function record(
  org: string,
  runId: string,
  id: string,
  cost: bigint | null,
  when: Date,
  facts: Partial<Omit<TurnSettlement, "runId" | "served">> = {},
): RequestUsage {
  return {
    requestId: id,
    orgId: org,
    workspaceId: "",
    agent: "",
    listCost: cost ?? 0n,
    isByok: true,
    at: when,
    turn: {
      runId,
      served: cost !== null,
      model: "openai/gpt-4o-mini",
      finishReason: "stop",
      toolCalls: 0,
      failedToolCalls: 0,
      promptTokens: 10,
      cachedTokens: 5,
      ...facts,
    },
  };
}

/** The Db, counting the statements and transactions it is asked for. */
function counting(db: Db): { db: Db; statements: number; transactions: number } {
  const counts = { statements: 0, transactions: 0 };
  const wrapped = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === "query") return (...args: Parameters<Db["query"]>) => (counts.statements++, target.query(...args));
      if (prop === "tx") return (...args: Parameters<Db["tx"]>) => (counts.transactions++, target.tx(...args));
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
  return Object.assign(counts, { db: wrapped });
}

describe("turns settled with their requests' records", () => {
  it("moves a served turn's reservation to spend and refunds a failed turn's money, in the one statement that records both", async () => {
    const { org, agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1 });
    const served = await admitted(org, run, USD / 4n);
    const failed = await admitted(org, run, USD / 2n);
    const db = counting(l.db);

    const outcomes = await recordRequests(db.db, [
      record(org, run, served, USD / 10n, at("10:00:00"), { finishReason: "tool_calls", toolCalls: 2, failedToolCalls: 1 }),
      record(org, run, failed, null, at("10:00:01"), { model: "", finishReason: "" }),
    ]);

    const read = await getRun(agent, run);
    expect(outcomes).toEqual(["recorded", "recorded"]);
    expect([db.statements, db.transactions]).toEqual([1, 0]);
    expect([read.spent, read.reserved, read.turns_used, read.tool_calls_used, read.status]).toEqual([0.1, 0, 2, 2, "open"]);
    expect(read.tree.turns).toEqual([
      expect.objectContaining({ status: "served", cost: 0.1, reserved: 0, tool_calls: 2, failed_tool_calls: 1, finish_reason: "tool_calls", settled_at: at("10:00:00").toISOString() }),
      expect.objectContaining({ status: "failed", cost: 0, reserved: 0, model: null, settled_at: at("10:00:01").toISOString() }),
    ]);
  });

  it("settles a turn once: named twice in a batch, or recorded again later, it counts once", async () => {
    const { org, agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1 });
    const id = await admitted(org, run, USD / 4n);

    await recordRequests(l.db, [record(org, run, id, USD / 10n, at("10:00:00")), record(org, run, id, USD / 10n, at("10:00:00"))]);
    await recordRequests(l.db, [record(org, run, id, USD / 10n, at("10:00:05"))]);
    // A record of the same request as failed, late, changes nothing either: the first report wins.
    await recordRequests(l.db, [record(org, run, id, null, at("10:00:06"))]);

    const read = await getRun(agent, run);
    expect([read.spent, read.reserved, read.turns_used]).toEqual([0.1, 0, 1]);
    expect(read.tree.turns.map((t: { status: string }) => t.status)).toEqual(["served"]);
  });

  it("settles several turns of one run in one batch in order, counting cost per tumbling UTC minute", async () => {
    const { org, agent } = tenant();
    const run = await openRun(agent, { budget_usd: 10, max_cost_per_minute_usd: 1 });
    const ids = [await admitted(org, run, USD), await admitted(org, run, USD), await admitted(org, run, USD)];

    // Exactly at the limit is not above it; the next minute starts from zero; then one nanodollar passes it.
    await recordRequests(l.db, [
      record(org, run, ids[0] ?? "", USD, at("10:00:10")),
      record(org, run, ids[1] ?? "", USD, at("10:01:00")),
      record(org, run, ids[2] ?? "", 1n, at("10:01:59")),
    ]);

    const read = await getRun(agent, run);
    const minute = await l.db.query<{ minute_start: Date; minute_spent_nanodollars: string }>(
      "SELECT minute_start, minute_spent_nanodollars FROM runs WHERE run_id = $1",
      [run],
    );
    expect([read.status, read.pause_reason, read.paused_at, read.spent, read.reserved]).toEqual(["paused", "cost_velocity", at("10:01:59").toISOString(), 2.000000001, 0]);
    expect([new Date(minute.rows[0]?.minute_start ?? 0), BigInt(minute.rows[0]?.minute_spent_nanodollars ?? -1)]).toEqual([at("10:01:00"), USD + 1n]);
  });

  it("pauses for consecutive tool calls without progress, which a turn answering otherwise resets", async () => {
    const { org, agent } = tenant();
    const run = await openRun(agent, { budget_usd: 10, max_tool_calls_without_progress: 2 });
    const ids = await Promise.all([1, 2, 3, 4].map(() => admitted(org, run, USD / 100n)));
    const [a = "", b = "", c = "", d = ""] = ids;

    await recordRequests(l.db, [
      record(org, run, a, 1n, at("10:00:00"), { finishReason: "tool_calls", toolCalls: 2 }),
      record(org, run, b, 1n, at("10:00:01"), { finishReason: "stop" }),
      record(org, run, c, 1n, at("10:00:02"), { finishReason: "tool_calls", toolCalls: 2 }),
    ]);
    const open = await getRun(agent, run);
    await recordRequests(l.db, [record(org, run, d, 1n, at("10:00:03"), { finishReason: "tool_calls", toolCalls: 1 })]);
    const paused = await getRun(agent, run);

    expect([open.status, open.tool_calls_without_progress, open.tool_calls_used]).toEqual(["open", 2, 4]);
    expect([paused.status, paused.pause_reason, paused.tool_calls_without_progress, paused.tool_calls_used]).toEqual(["paused", "no_progress", 3, 5]);
  });

  it("exhausts the run when its spend reaches the budget, before any detector", async () => {
    const { org, agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1, max_cost_per_minute_usd: 0.5 });
    const id = await admitted(org, run, USD / 2n);

    await recordRequests(l.db, [record(org, run, id, USD, at("10:00:00"))]);

    const read = await getRun(agent, run);
    expect([read.status, read.pause_reason, read.spent, read.reserved]).toEqual(["exhausted", null, 1, 0]);
  });

  it("settles the turns of several runs interleaved in one batch, each run in its own order", async () => {
    const { org, agent } = tenant();
    const pausing = await openRun(agent, { budget_usd: 10, max_tool_calls_without_progress: 2 });
    const exhausting = await openRun(agent, { budget_usd: 1 });
    const plain = await openRun(agent, { budget_usd: 10 });
    const [p1 = "", p2 = "", p3 = ""] = [await admitted(org, pausing, USD / 100n), await admitted(org, pausing, USD / 100n), await admitted(org, pausing, USD / 100n)];
    const [e1 = "", e2 = ""] = [await admitted(org, exhausting, USD / 4n), await admitted(org, exhausting, USD / 4n)];
    const [q1 = "", q2 = ""] = [await admitted(org, plain, USD / 2n), await admitted(org, plain, USD / 2n)];

    // The runs' turns alternate; q1 is named first under another organisation (no turn of it), then
    // for real, then again; p3's stop comes after two tool-call turns and resets their count.
    const outcomes = await recordRequests(l.db, [
      record(org, pausing, p1, 1n, at("10:00:00"), { finishReason: "tool_calls", toolCalls: 2 }),
      record(orgId(), plain, q1, USD, at("10:00:00")),
      record(org, exhausting, e1, USD / 2n, at("10:00:01")),
      record(org, pausing, p2, 1n, at("10:00:02"), { finishReason: "tool_calls", toolCalls: 1 }),
      record(org, plain, q1, USD / 10n, at("10:00:03")),
      record(org, exhausting, e2, USD / 2n, at("10:00:04")),
      record(org, plain, q1, USD, at("10:00:05")),
      record(org, pausing, p3, 1n, at("10:00:06"), { finishReason: "stop" }),
      record(org, plain, q2, null, at("10:00:07")),
    ]);

    const [p, e, q] = [await getRun(agent, pausing), await getRun(agent, exhausting), await getRun(agent, plain)];
    expect(outcomes.filter((o) => o === "recorded")).toHaveLength(7);
    // Paused at p2 (3 tool calls without progress > 2); p3 still counts its money and resets the count.
    expect([p.status, p.pause_reason, p.paused_at, p.spent, p.reserved, p.tool_calls_used, p.tool_calls_without_progress, p.updated_at]).toEqual([
      "paused",
      "no_progress",
      at("10:00:02").toISOString(),
      3e-9,
      0,
      3,
      0,
      at("10:00:06").toISOString(),
    ]);
    expect([e.status, e.spent, e.reserved]).toEqual(["exhausted", 1, 0]);
    expect([q.status, q.spent, q.reserved, q.turns_used]).toEqual(["open", 0.1, 0, 2]);
    expect(q.tree.turns.map((t: { status: string; cost: number }) => [t.status, t.cost])).toEqual([
      ["served", 0.1],
      ["failed", 0],
    ]);
  });

  it("moves money but not the status of a run that is no longer open, and leaves another organisation's run alone", async () => {
    const { org, agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1 });
    const id = await admitted(org, run, USD / 2n);
    const other = await admitted(org, run, USD / 4n);
    expect((await l.http("POST", `/v1/runs/${run}/close`, agent, {})).status).toBe(200);

    await recordRequests(l.db, [record(org, run, id, 2n * USD, at("10:00:00")), record(orgId(), run, other, USD, at("10:00:00"))]);

    const read = await getRun(agent, run);
    expect([read.status, read.spent, read.reserved]).toEqual(["completed", 2, 0.25]);
    expect(read.tree.turns.map((t: { status: string }) => t.status)).toEqual(["served", "admitted"]);
  });
});
