import { ledger } from "@router/proto";
import { orgId, requestId, startTestLedger, USD, workspaceId, type TestLedger } from "./ledger-fixture";

const W = USD / 4n;

let l: TestLedger;
beforeAll(async () => {
  l = await startTestLedger({ label: "request_usage" });
});
afterAll(() => l.close());
beforeEach(() => l.clock.set(new Date("2026-11-18T10:00:00.000Z")));

/** A finished request as the gateway reports it: settled when it cost something, else released. */
function finished(org: string, opts: { workspaceId?: string; agent?: string; cost?: bigint; holdId?: string; id?: string }) {
  const request = { orgId: org, requestId: opts.id ?? requestId(), workspaceId: opts.workspaceId ?? "", agent: opts.agent ?? "" };
  return opts.cost === undefined
    ? { releases: [{ holdId: opts.holdId ?? "", ...request }] }
    : { settlements: [{ holdId: opts.holdId ?? "", listCostNanodollars: opts.cost, isByok: true, ...request }] };
}

const agents = async (org: string) => (await l.http("GET", "/v1/agents", { orgId: org })).json.data as Array<Record<string, unknown>>;

describe("the record of finished requests", () => {
  it("sums each workspace's spend this month, counting a request sent again once", async () => {
    const org = orgId();
    const ws = workspaceId();
    const id = requestId();

    await l.closeHolds(finished(org, { workspaceId: ws, cost: W, id }));
    await l.closeHolds(finished(org, { workspaceId: ws, cost: W, id }));
    await l.closeHolds(finished(org, { workspaceId: ws, cost: 2n * W }));
    await l.closeHolds(finished(org, { workspaceId: ws }));

    const res = await l.workspaceSpend({ orgId: org, workspaceIds: [ws, workspaceId()] });
    expect(res.workspaces.map((w) => w.spendThisMonthNanodollars)).toEqual([3n * W, 0n]);
  });

  it("counts only this UTC month, plus the worst case of the workspace's requests in flight", async () => {
    const org = orgId();
    const ws = workspaceId();
    await l.http("PUT", `/v1/workspaces/${ws}/budgets/weekly`, { orgId: org, workspace: ws }, { limit_usd: 100 });
    await l.http("PUT", `/v1/workspaces/${ws}/budgets/daily`, { orgId: org, workspace: ws }, { limit_usd: 10, include_byok: false });
    l.clock.set(new Date("2026-10-31T23:59:00.000Z"));
    await l.closeHolds(finished(org, { workspaceId: ws, cost: USD }));
    l.clock.set(new Date("2026-11-01T00:01:00.000Z"));
    await l.closeHolds(finished(org, { workspaceId: ws, cost: W }));
    const inFlight = await l.admit({ requestId: requestId(), orgId: org, workspaceId: ws, worstCaseNanodollars: 2n * W, isByok: true });
    expect(inFlight.holdId).not.toBe("");

    const [entry] = (await l.workspaceSpend({ orgId: org, workspaceIds: [ws] })).workspaces;

    expect(entry).toEqual({
      workspaceId: ws,
      spendThisMonthNanodollars: 3n * W,
      budgets: [
        { window: ledger.Window.WINDOW_DAILY, limitNanodollars: 10n * USD, includeByok: false },
        { window: ledger.Window.WINDOW_WEEKLY, limitNanodollars: 100n * USD, includeByok: true },
      ],
    });
  });

  it("lists the agents seen in the last 31 days and those with a budget, most recently seen first", async () => {
    const org = orgId();
    l.clock.set(new Date("2026-10-10T12:00:00.000Z"));
    await l.closeHolds(finished(org, { agent: "old-timer", cost: W }));
    await l.closeHolds(finished(org, { agent: "budgeted-old", cost: W }));
    l.clock.set(new Date("2026-11-17T08:00:00.000Z"));
    await l.closeHolds(finished(org, { agent: "planner", cost: W }));
    await l.closeHolds(finished(org, { agent: "planner", cost: 2n * W }));
    await l.closeHolds(finished(org, { agent: "planner" }));
    l.clock.set(new Date("2026-11-18T09:00:00.000Z"));
    await l.closeHolds(finished(org, { agent: "coder", workspaceId: workspaceId() }));
    await l.http("PUT", "/v1/agents/budgeted-old/budgets/daily", { orgId: org }, { limit_usd: 1 });
    await l.http("PUT", "/v1/agents/never-seen/budgets/daily", { orgId: org }, { limit_usd: 1 });

    const rows = await agents(org);

    expect(rows.map((r) => [r.agent, r.last_seen, r.requests_this_month, r.spend_this_month])).toEqual([
      ["coder", "2026-11-18T09:00:00.000Z", 1, 0],
      ["planner", "2026-11-17T08:00:00.000Z", 3, 0.75],
      ["budgeted-old", "2026-10-10T12:00:00.000Z", 0, 0],
      ["never-seen", null, 0, 0],
    ]);
  });

  it("lists at most 500 agents", async () => {
    const org = orgId();
    await l.closeHolds({
      releases: Array.from({ length: 501 }, (_, i) => ({ holdId: "", orgId: org, requestId: requestId(), agent: `agent-${i}` })),
    });
    expect(await agents(org)).toHaveLength(500);
  });

  it("refuses a closing that names neither a hold nor a request, naming hold_id", async () => {
    await expect(l.closeHolds({ settlements: [{ holdId: "", listCostNanodollars: 1n }] })).rejects.toMatchObject({
      details: { field: "settlements[0].hold_id" },
    });
    await expect(
      l.closeHolds({ releases: [{ holdId: "", orgId: orgId(), requestId: requestId(), agent: "bad agent" }] }),
    ).rejects.toMatchObject({ details: { field: "releases[0].agent" } });
  });
});

describe("a budget set after spending", () => {
  it("counts the spend already made in its window, so it can refuse at once", async () => {
    const org = orgId();
    const ws = workspaceId();
    await l.closeHolds(finished(org, { workspaceId: ws, agent: "spender", cost: 2n * W }));
    l.clock.set(new Date("2026-11-17T10:00:00.000Z"));
    // Yesterday's spend is outside today's window.
    await l.closeHolds(finished(org, { workspaceId: ws, agent: "spender", cost: 10n * USD }));
    l.clock.set(new Date("2026-11-18T10:00:00.000Z"));

    await l.http("PUT", `/v1/workspaces/${ws}/budgets/daily`, { orgId: org, workspace: ws }, { limit_usd: 0.5 });
    await l.http("PUT", "/v1/agents/spender/budgets/daily", { orgId: org }, { limit_usd: 0.75 });
    const admit = (agent: string) =>
      l.admit({ requestId: requestId(), orgId: org, workspaceId: ws, agent, worstCaseNanodollars: W, isByok: true });

    expect((await admit("spender")).refusal?.scope).toBe("workspace");
    await l.http("DELETE", `/v1/workspaces/${ws}/budgets/daily`, { orgId: org, workspace: ws });
    expect((await admit("spender")).admitted).toBe(true);
  });

  it("leaves BYOK spend out when the budget excludes it", async () => {
    const org = orgId();
    const ws = workspaceId();
    await l.closeHolds(finished(org, { workspaceId: ws, cost: 4n * USD }));

    await l.http("PUT", `/v1/workspaces/${ws}/budgets/monthly`, { orgId: org, workspace: ws }, { limit_usd: 1, include_byok: false });

    const billed = await l.admit({ requestId: requestId(), orgId: org, workspaceId: ws, worstCaseNanodollars: W, isByok: false });
    expect(billed.admitted).toBe(true);
  });
});
