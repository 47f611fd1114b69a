import { randomBytes } from "node:crypto";
import type { Subscription } from "@router/bus";
import { events, ledger, TOPICS } from "@router/proto";
import { waitFor } from "@router/testkit";
import { keyCeiling, orgId, requestId, startTestLedger, USD, workspaceId, type TestLedger } from "./ledger-fixture";

const CENT = USD / 100n;

let l: TestLedger;
let subscription: Subscription;
const received: events.ThresholdCrossed[] = [];
const eventIds: string[] = [];
beforeAll(async () => {
  l = await startTestLedger({ label: "thresholds" });
  subscription = await l.bus.subscribe({
    topic: TOPICS.thresholdCrossed,
    group: `test-${randomBytes(4).toString("hex")}`,
    handler: async (e) => {
      received.push(events.ThresholdCrossed.decode(e.payload));
      eventIds.push(e.id);
    },
  });
});
afterAll(async () => {
  await subscription.close();
  await l.close();
});
beforeEach(() => l.clock.set(new Date("2026-11-18T10:00:00.000Z")));

const crossingsOf = (org: string) => received.filter((e) => e.orgId === org);

/** Admits and settles one request of `org` costing `cost`, counted by `ceilings` and its agent's budgets. */
async function spend(org: string, cost: bigint, opts: { ceilings?: ledger.Ceiling[]; agent?: string; workspaceId?: string } = {}) {
  const id = requestId();
  const admitted = await l.admit({
    requestId: id,
    orgId: org,
    ceilings: opts.ceilings ?? [],
    agent: opts.agent ?? "",
    workspaceId: opts.workspaceId ?? "",
    worstCaseNanodollars: cost,
    isByok: true,
  });
  if (!admitted.admitted) throw new Error(`not admitted: ${admitted.refusal?.message}`);
  await l.closeHolds({
    settlements: [
      { holdId: admitted.holdId, listCostNanodollars: cost, orgId: org, requestId: id, agent: opts.agent ?? "", isByok: true },
    ],
  });
  return id;
}

describe("threshold crossings", () => {
  it("announces each higher whole percentage of a key ceiling a settlement reaches, with the one before", async () => {
    const org = orgId();
    const key = keyCeiling({ limitNanodollars: USD, subjectName: "Production" });

    await spend(org, 30n * CENT, { ceilings: [key] });
    const second = await spend(org, 25n * CENT, { ceilings: [key] });
    await waitFor(() => crossingsOf(org).length === 2);

    const [first, next] = crossingsOf(org);
    expect(first).toMatchObject({ percent: 30, previousPercent: 0 });
    expect(next).toEqual({
      crossingId: expect.stringMatching(/^thr_/) as string,
      orgId: org,
      subjectKind: "key",
      subject: key.subjectId,
      keyName: "Production",
      workspaceId: "",
      window: "daily",
      windowStartMs: BigInt(Date.parse("2026-11-18T00:00:00.000Z")),
      percent: 55,
      previousPercent: 30,
      mode: "hard",
      limitNanodollars: USD,
      usageNanodollars: 55n * CENT,
      requestId: second,
      crossedAtMs: BigInt(Date.parse("2026-11-18T10:00:00.000Z")),
    });
    expect(eventIds).toContain(next?.crossingId);
  });

  it("gives one event at the highest when one settlement crosses several percentages, and none without a new one", async () => {
    const org = orgId();
    const key = keyCeiling({ limitNanodollars: 100n * CENT });

    await spend(org, 85n * CENT, { ceilings: [key] });
    await spend(org, USD / 1000n, { ceilings: [key] });
    await spend(org, 40n * CENT, { ceilings: [key] });
    await waitFor(() => crossingsOf(org).length >= 2);

    expect(crossingsOf(org).map((e) => [e.previousPercent, e.percent])).toEqual([
      [0, 85],
      [85, 100],
    ]);
    expect(crossingsOf(org)[1]?.usageNanodollars).toBe(125n * CENT + USD / 1000n);
  });

  it("publishes one subject's crossings in the order reached when they share a clock tick", async () => {
    const org = orgId();
    const key = keyCeiling({ limitNanodollars: USD });
    // Committed together and written higher first, as two settlements in one millisecond may leave them.
    const row = (percent: number, previous: number) => [
      `thr_${randomBytes(6).toString("hex")}`,
      org,
      key.subjectId,
      percent,
      previous,
      USD.toString(),
      ((USD * BigInt(percent)) / 100n).toString(),
      requestId(),
    ];
    await l.db.query(
      `INSERT INTO threshold_crossings (crossing_id, org_id, subject_kind, subject_id, subject_name, workspace_id, window_kind,
         window_start, percent, previous_percent, hard, limit_nanodollars, usage_nanodollars, request_id, crossed_at)
       SELECT c[1], c[2], 'key', c[3], '', '', 'daily', '2026-11-18T00:00:00Z', c[4]::int, c[5]::int, true, c[6]::bigint,
              c[7]::bigint, c[8], '2026-11-18T10:00:00Z'
       FROM (VALUES ($1::text[]), ($2::text[])) AS v(c)`,
      [row(80, 40).map(String), row(40, 0).map(String)],
    );
    await waitFor(() => crossingsOf(org).length === 2);

    expect(crossingsOf(org).map((e) => [e.previousPercent, e.percent])).toEqual([
      [0, 40],
      [40, 80],
    ]);
  });

  it("starts again in a new window", async () => {
    const org = orgId();
    const key = keyCeiling({ limitNanodollars: USD });
    await spend(org, 60n * CENT, { ceilings: [key] });
    l.clock.set(new Date("2026-11-19T09:00:00.000Z"));
    await spend(org, 60n * CENT, { ceilings: [key] });
    await waitFor(() => crossingsOf(org).length === 2);

    expect(crossingsOf(org).map((e) => [e.previousPercent, e.percent, e.windowStartMs])).toEqual([
      [0, 60, BigInt(Date.parse("2026-11-18T00:00:00.000Z"))],
      [0, 60, BigInt(Date.parse("2026-11-19T00:00:00.000Z"))],
    ]);
  });

  it("announces an agent budget's crossing by the agent's name, with its workspace and mode", async () => {
    const org = orgId();
    const ws = workspaceId();
    await l.http("PUT", "/v1/agents/planner/budgets/monthly", { orgId: org, workspace: ws }, {
      limit_usd: 2,
      mode: "soft",
      workspace_id: ws,
    });

    await spend(org, USD, { agent: "planner", workspaceId: ws });
    await waitFor(() => crossingsOf(org).length === 1);

    expect(crossingsOf(org)[0]).toMatchObject({
      subjectKind: "agent",
      subject: "planner",
      keyName: "",
      workspaceId: ws,
      window: "monthly",
      mode: "soft",
      percent: 50,
      previousPercent: 0,
      limitNanodollars: 2n * USD,
    });
  });

  it("announces nothing for a workspace budget (alerts know keys and agents)", async () => {
    const org = orgId();
    const ws = workspaceId();
    await l.http("PUT", `/v1/workspaces/${ws}/budgets/daily`, { orgId: org, workspace: ws }, { limit_usd: 1 });
    const key = keyCeiling({ limitNanodollars: 180n * CENT });

    await spend(org, 90n * CENT, { workspaceId: ws, ceilings: [key] });
    await waitFor(() => crossingsOf(org).length === 1);

    expect(crossingsOf(org)[0]).toMatchObject({ subjectKind: "key", percent: 50 });
    const recorded = await l.db.query<{ subject_kind: string }>("SELECT subject_kind FROM threshold_crossings WHERE org_id = $1", [org]);
    expect(recorded.rows).toEqual([{ subject_kind: "key" }]);
  });
});
