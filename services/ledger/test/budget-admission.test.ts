import { ledger } from "@router/proto";
import { keyCeiling, orgId, requestId, startTestLedger, USD, workspaceId, type TestLedger } from "./ledger-fixture";

const { LIMIT_MODE_SOFT } = ledger.LimitMode;
const W = USD / 4n;

let l: TestLedger;
beforeAll(async () => {
  l = await startTestLedger({ label: "budget_admission" });
});
afterAll(() => l.close());
beforeEach(() => l.clock.set(new Date("2026-11-18T10:00:00.000Z")));

const workspaceBudget = (org: string, ws: string, interval: string, body: Record<string, unknown>) =>
  expectOk(l.http("PUT", `/v1/workspaces/${ws}/budgets/${interval}`, { orgId: org, workspace: ws }, body));
const agentBudget = (org: string, agent: string, interval: string, body: Record<string, unknown>) =>
  expectOk(
    l.http("PUT", `/v1/agents/${agent}/budgets/${interval}`, { orgId: org, workspace: body.workspace_id as string | undefined }, body),
  );

async function expectOk(res: Promise<{ status: number; json: Record<string, unknown> }>): Promise<void> {
  const { status, json } = await res;
  if (status !== 200) throw new Error(`budget write answered ${status}: ${JSON.stringify(json)}`);
}

/** A BYOK request of `org` (every request is BYOK while credits cannot buy anything). */
const request = (org: string, extra: Partial<ledger.AdmitRequest> = {}): Partial<ledger.AdmitRequest> => ({
  requestId: requestId(),
  orgId: org,
  ceilings: [],
  worstCaseNanodollars: W,
  isByok: true,
  ...extra,
});

async function admitAndSettle(req: Partial<ledger.AdmitRequest>, cost = W): Promise<ledger.AdmitResponse> {
  const res = await l.admit(req);
  if (res.admitted) await l.settle({ holdId: res.holdId, listCostNanodollars: cost });
  return res;
}

describe("workspace budgets at admission", () => {
  it("binds every key of the workspace: the second key is refused once the first spent the budget", async () => {
    const org = orgId();
    const ws = workspaceId();
    await workspaceBudget(org, ws, "daily", { limit_usd: 0.5 });
    const keyA = keyCeiling({ limitNanodollars: 10n * USD });

    expect((await admitAndSettle(request(org, { workspaceId: ws, ceilings: [keyA] }))).admitted).toBe(true);
    expect((await admitAndSettle(request(org, { workspaceId: ws, ceilings: [keyA] }))).admitted).toBe(true);
    // Key B has no ceiling of its own.
    const refused = await l.admit(request(org, { workspaceId: ws }));

    expect(refused).toMatchObject({ admitted: false, holdId: "" });
    expect(refused.refusal).toEqual({
      httpStatus: 403,
      code: "budget_exceeded",
      scope: "workspace",
      subjectId: ws,
      runStatus: "",
      message: "This workspace has reached its daily spend limit of $0.50; the limit resets at 2026-11-19T00:00:00.000Z.",
    });
    // Another workspace of the organisation is not bound by it.
    expect((await l.admit(request(org, { workspaceId: workspaceId() }))).admitted).toBe(true);
  });

  it("places a hold on the workspace's row even for a key without a ceiling, and releases it", async () => {
    const org = orgId();
    const ws = workspaceId();
    await workspaceBudget(org, ws, "monthly", { limit_usd: 1 });
    const ceiling = keyCeiling({ subjectKind: "workspace", subjectId: ws, window: ledger.Window.WINDOW_MONTHLY });

    const res = await l.admit(request(org, { workspaceId: ws }));
    expect(res.holdId).toMatch(/^hold_/);
    expect(await l.used(ceiling)).toBe(W);
    await l.release(res.holdId);
    expect(await l.used(ceiling)).toBe(0n);
  });

  it("leaves BYOK requests out of a budget set with include_byok false", async () => {
    const org = orgId();
    const ws = workspaceId();
    await workspaceBudget(org, ws, "daily", { limit_usd: 0, include_byok: false });

    const byok = await l.admit(request(org, { workspaceId: ws }));
    const billed = await l.admit(request(org, { workspaceId: ws, isByok: false }));

    expect(byok).toMatchObject({ admitted: true, holdId: "" });
    expect(billed.refusal?.scope).toBe("workspace");
  });

  it("binds each window on its own: a full day refuses even though the month has room", async () => {
    const org = orgId();
    const ws = workspaceId();
    await workspaceBudget(org, ws, "daily", { limit_usd: 0.25 });
    await workspaceBudget(org, ws, "monthly", { limit_usd: 100 });

    await admitAndSettle(request(org, { workspaceId: ws }));
    expect((await l.admit(request(org, { workspaceId: ws }))).refusal?.message).toContain("daily spend limit of $0.25");
    l.clock.set(new Date("2026-11-19T00:00:00.000Z"));
    expect((await l.admit(request(org, { workspaceId: ws }))).admitted).toBe(true);
  });

  it("stops counting a deleted budget", async () => {
    const org = orgId();
    const ws = workspaceId();
    await workspaceBudget(org, ws, "daily", { limit_usd: 0 });
    expect((await l.admit(request(org, { workspaceId: ws }))).admitted).toBe(false);

    await l.http("DELETE", `/v1/workspaces/${ws}/budgets/daily`, { orgId: org, workspace: ws });

    expect((await l.admit(request(org, { workspaceId: ws }))).admitted).toBe(true);
  });
});

describe("agent budgets at admission", () => {
  it("binds an agent across every key and workspace of the organisation", async () => {
    const org = orgId();
    await agentBudget(org, "planner", "daily", { limit_usd: 0.25 });

    await admitAndSettle(request(org, { workspaceId: workspaceId(), agent: "planner" }));
    const refused = await l.admit(request(org, { workspaceId: workspaceId(), agent: "planner" }));

    expect(refused.refusal).toMatchObject({
      scope: "agent",
      message: "This agent has reached its daily spend limit of $0.25; the limit resets at 2026-11-19T00:00:00.000Z.",
    });
    expect((await l.admit(request(org, { agent: "other-agent" }))).admitted).toBe(true);
    // Agent names belong to an organisation: another one's planner is not bound.
    expect((await l.admit(request(orgId(), { agent: "planner" }))).admitted).toBe(true);
  });

  it("applies a workspace-scoped budget to that workspace's keys only, beside the organisation-wide one", async () => {
    const org = orgId();
    const wsA = workspaceId();
    const wsB = workspaceId();
    await agentBudget(org, "coder", "daily", { limit_usd: 0.75 });
    await agentBudget(org, "coder", "daily", { limit_usd: 0.25, workspace_id: wsA });

    await admitAndSettle(request(org, { workspaceId: wsA, agent: "coder" }));
    expect((await l.admit(request(org, { workspaceId: wsA, agent: "coder" }))).refusal?.scope).toBe("agent");
    // B still has room under the organisation-wide budget: 0.25 spent of 0.75.
    await admitAndSettle(request(org, { workspaceId: wsB, agent: "coder" }));
    expect((await admitAndSettle(request(org, { workspaceId: wsB, agent: "coder" }))).admitted).toBe(true);
    expect((await l.admit(request(org, { workspaceId: wsB, agent: "coder" }))).refusal?.scope).toBe("agent");
  });

  it("serves past a soft budget with the warning sentence", async () => {
    const org = orgId();
    await agentBudget(org, "drafter", "weekly", { limit_usd: 0.25, mode: "soft" });

    const first = await admitAndSettle(request(org, { agent: "drafter" }));
    const past = await admitAndSettle(request(org, { agent: "drafter" }));

    expect(first).toMatchObject({ admitted: true, limitWarning: "" });
    expect(past).toMatchObject({
      admitted: true,
      limitWarning: "This agent has reached its weekly spend limit of $0.25; the limit resets at 2026-11-23T00:00:00.000Z.",
    });
  });
});

describe("refusal precedence: key, then the key's guardrail budgets, then workspace, then agent", () => {
  type Subject = "key" | "guardrail" | "workspace" | "agent";
  it.each<[Subject[], Subject]>([
    [["key", "workspace", "agent"], "key"],
    [["key", "guardrail", "workspace"], "key"],
    [["guardrail", "workspace", "agent"], "guardrail"],
    [["guardrail"], "guardrail"],
    [["key", "agent"], "key"],
    [["workspace", "agent"], "workspace"],
    [["agent"], "agent"],
    [["workspace"], "workspace"],
  ])("with %j exhausted the refusal names %s", async (exhausted, scope) => {
    const org = orgId();
    const ws = workspaceId();
    // The first request fills the exhausted subjects (a limit of one request), the others have room.
    const limit = (s: Subject) => (exhausted.includes(s) ? 0.25 : 100);
    await workspaceBudget(org, ws, "monthly", { limit_usd: limit("workspace") });
    await agentBudget(org, "triage", "monthly", { limit_usd: limit("agent") });
    const key = keyCeiling({ limitNanodollars: BigInt(limit("key") * 100) * (USD / 100n) });
    // A guardrail's budget comes as the gateway sends it: after the key's ceiling, on a counter of
    // that guardrail and the key.
    const guardrail = keyCeiling({
      subjectKind: "guardrail",
      subjectId: `gr_1/${key.subjectId}`,
      limitNanodollars: BigInt(limit("guardrail") * 100) * (USD / 100n),
      window: ledger.Window.WINDOW_MONTHLY,
    });
    const req = () => request(org, { workspaceId: ws, agent: "triage", ceilings: [key, guardrail] });
    expect((await admitAndSettle(req())).admitted).toBe(true);

    const res = await l.admit(req());

    expect(res.admitted).toBe(false);
    expect(res.refusal?.scope).toBe(scope);
  });

  it("names the window that frees last when several windows of one subject are full", async () => {
    const org = orgId();
    const ws = workspaceId();
    await workspaceBudget(org, ws, "daily", { limit_usd: 0.25 });
    await workspaceBudget(org, ws, "monthly", { limit_usd: 0.5 });
    await admitAndSettle(request(org, { workspaceId: ws }), 2n * W);

    const res = await l.admit(request(org, { workspaceId: ws }));

    expect(res.refusal?.message).toBe(
      "This workspace has reached its monthly spend limit of $0.50; the limit resets at 2026-12-01T00:00:00.000Z.",
    );
  });

  it("reserves on every counting subject at once, or on none when one refuses", async () => {
    const org = orgId();
    const ws = workspaceId();
    await workspaceBudget(org, ws, "daily", { limit_usd: 10 });
    await agentBudget(org, "scout", "daily", { limit_usd: 0 });
    const key = keyCeiling();
    const wsRow = keyCeiling({ subjectKind: "workspace", subjectId: ws, limitNanodollars: 10n * USD });

    expect((await l.admit(request(org, { workspaceId: ws, agent: "scout", ceilings: [key] }))).admitted).toBe(false);
    expect(await l.used(key)).toBe(0n);
    expect(await l.used(wsRow)).toBe(0n);

    expect((await l.admit(request(org, { workspaceId: ws, agent: "other", ceilings: [key] }))).admitted).toBe(true);
    expect(await l.used(key)).toBe(W);
    expect(await l.used(wsRow)).toBe(W);
  });

  it("joins the warnings of several soft limits, key first", async () => {
    const org = orgId();
    await agentBudget(org, "echo", "daily", { limit_usd: 0, mode: "soft" });
    const key = keyCeiling({ limitNanodollars: 0n, mode: LIMIT_MODE_SOFT });

    const res = await l.admit(request(org, { agent: "echo", ceilings: [key] }));

    expect(res.admitted).toBe(true);
    expect(res.limitWarning).toBe(
      "This key has reached its daily spend limit of $0.00; the limit resets at 2026-11-19T00:00:00.000Z. " +
        "This agent has reached its daily spend limit of $0.00; the limit resets at 2026-11-19T00:00:00.000Z.",
    );
  });
});

describe("dry runs with budgets", () => {
  it("checks budgets in a dry run without reserving", async () => {
    const org = orgId();
    const ws = workspaceId();
    await workspaceBudget(org, ws, "daily", { limit_usd: 0 });

    const res = await l.admit(request(org, { workspaceId: ws, dryRun: true, requestId: "" }));

    expect(res.refusal?.scope).toBe("workspace");
  });

  it("refuses a malformed agent or workspace in Admit, naming the field", async () => {
    await expect(l.admit(request(orgId(), { agent: "-nope" }))).rejects.toMatchObject({ details: { field: "agent" } });
    await expect(l.admit(request(orgId(), { workspaceId: "client-a" }))).rejects.toMatchObject({
      details: { field: "workspace_id" },
    });
  });
});

describe("budgets written on another replica", () => {
  it("bind here once this replica reads them again (the refresh interval)", async () => {
    const replica = await startTestLedger({ replicaOf: l, budgetRefreshMs: 1_000 });
    try {
      replica.clock.set(l.clock.now());
      const org = orgId();
      const ws = workspaceId();
      expect((await replica.admit(request(org, { workspaceId: ws }))).admitted).toBe(true);

      await workspaceBudget(org, ws, "daily", { limit_usd: 0 });
      // Past the longest an entry is served without waiting for a read.
      replica.clock.advance(61_000);

      expect((await replica.admit(request(org, { workspaceId: ws }))).refusal?.scope).toBe("workspace");
    } finally {
      await replica.close();
    }
  });
});

describe("which subjects have a budget (BudgetSubjects, for the gateway to skip Admit)", () => {
  it("names the workspaces and agents with a budget, organisation-wide or scoped, and nothing for another organisation", async () => {
    const org = orgId();
    const ws = workspaceId();
    const scoped = workspaceId();
    expect(await l.budgetSubjects(org)).toEqual({ workspaceIds: [], agents: [] });
    await workspaceBudget(org, ws, "monthly", { limit_usd: 5 });
    await agentBudget(org, "planner", "daily", { limit_usd: 1 });
    await agentBudget(org, "coder", "daily", { limit_usd: 1, workspace_id: scoped });
    const subjects = await l.budgetSubjects(org);
    expect(subjects.workspaceIds).toEqual([ws]);
    expect([...subjects.agents].sort()).toEqual(["coder", "planner"]);
    expect(await l.budgetSubjects(orgId())).toEqual({ workspaceIds: [], agents: [] });
  });

  it("refuses a request naming no organisation", async () => {
    await expect(l.budgetSubjects("")).rejects.toThrow(/org_id/);
  });
});
