import { ledger } from "@router/proto";
import { keyCeiling, orgId, requestId, startTestLedger, USD, workspaceId, type Caller, type TestLedger } from "./ledger-fixture";

let l: TestLedger;
beforeAll(async () => {
  l = await startTestLedger({ label: "runs", holdTtlMs: 60_000, sweepIntervalMs: 20 });
});
afterAll(() => l.close());

/** An organisation, its agent's inference key and an owner's management key. */
function tenant() {
  const org = orgId();
  return { org, agent: { orgId: org, credential: "inference" } as Caller, owner: { orgId: org } as Caller };
}

async function openRun(agent: Caller, body: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await l.http("POST", "/v1/runs", agent, body);
  expect(res.status).toBe(201);
  return res.json.data as Record<string, any>;
}

const getRun = async (caller: Caller, id: string) => (await l.http("GET", `/v1/runs/${id}`, caller)).json.data as Record<string, any>;

/** A turn: Admit naming the run, with the worst case given. */
function turn(org: string, runId: string, worstCase: bigint, extra: Partial<ledger.AdmitRequest> = {}) {
  return l.admit({ requestId: requestId(), orgId: org, runId, worstCaseNanodollars: worstCase, isByok: true, ...extra });
}

function runTurn(runId: string, facts: Partial<ledger.RunTurn> = {}): ledger.RunTurn {
  return ledger.RunTurn.fromPartial({ runId, model: "openai/gpt-4o-mini", finishReason: "stop", ...facts });
}

/** Admits a turn and settles it with `cost`; answers the request id. */
async function servedTurn(org: string, runId: string, cost: bigint, facts: Partial<ledger.RunTurn> = {}): Promise<string> {
  const id = requestId();
  const a = await l.admit({ requestId: id, orgId: org, runId, worstCaseNanodollars: cost * 2n, isByok: true });
  expect(a.admitted).toBe(true);
  await l.settle({ holdId: a.holdId, listCostNanodollars: cost, orgId: org, requestId: id, isByok: true, runTurn: runTurn(runId, facts) });
  return id;
}

describe("opening a run", () => {
  it("opens a run for an inference key with every field", async () => {
    const { agent } = tenant();
    const run = await openRun(agent, {
      goal: "Summarise the quarter",
      budget_usd: 2.5,
      max_turns: 10,
      max_tool_calls: 20,
      model_policy: { prefer: ["openai/gpt-4o-mini"] },
      max_cost_per_minute_usd: 0.5,
      max_tool_calls_without_progress: 4,
    });
    expect(run).toEqual({
      id: expect.stringMatching(/^run_[0-9a-f]{24}$/),
      status: "open",
      goal: "Summarise the quarter",
      budget: 2.5,
      spent: 0,
      reserved: 0,
      remaining: 2.5,
      max_turns: 10,
      turns_used: 0,
      max_tool_calls: 20,
      tool_calls_used: 0,
      model_policy: { prefer: ["openai/gpt-4o-mini"] },
      max_cost_per_minute: 0.5,
      max_tool_calls_without_progress: 4,
      tool_calls_without_progress: 0,
      pause_reason: null,
      paused_at: null,
      created_at: "2026-11-18T10:00:00.000Z",
      updated_at: "2026-11-18T10:00:00.000Z",
      closed_at: null,
    });
  });

  it("refuses a management key and a dashboard session with 403", async () => {
    const { org } = tenant();
    for (const credential of ["management", "session"] as const) {
      const res = await l.http("POST", "/v1/runs", { orgId: org, credential }, { budget_usd: 1 });
      expect([res.status, res.json.error.code]).toEqual([403, "permission_denied"]);
    }
  });

  it.each<[string, string, unknown]>([
    ["a missing budget", "budget_usd", {}],
    ["a zero budget", "budget_usd", { budget_usd: 0 }],
    ["a budget below a nanodollar", "budget_usd", { budget_usd: 1e-12 }],
    ["a budget as text", "budget_usd", { budget_usd: "1" }],
    ["a goal past 2000 characters", "goal", { budget_usd: 1, goal: "x".repeat(2001) }],
    ["a fractional turn limit", "max_turns", { budget_usd: 1, max_turns: 1.5 }],
    ["a turn limit of zero", "max_turns", { budget_usd: 1, max_turns: 0 }],
    ["a negative tool-call limit", "max_tool_calls", { budget_usd: 1, max_tool_calls: -1 }],
    ["a model policy that is a list", "model_policy", { budget_usd: 1, model_policy: ["a"] }],
    ["a negative cost per minute", "max_cost_per_minute_usd", { budget_usd: 1, max_cost_per_minute_usd: -1 }],
    ["a no-progress limit as text", "max_tool_calls_without_progress", { budget_usd: 1, max_tool_calls_without_progress: "3" }],
    ["an unknown field", "budget", { budget_usd: 1, budget: 1 }],
  ])("answers 400 naming the field for %s", async (_what, field, body) => {
    const res = await l.http("POST", "/v1/runs", tenant().agent, body);
    expect(res.status).toBe(400);
    expect(res.json.error.details.field).toBe(field);
  });
});

describe("turns", () => {
  it("reserves a turn's worst case on the run and counts the turn at admission", async () => {
    const { org, agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1 });
    const a = await turn(org, run.id, USD / 4n);

    const read = await getRun(agent, run.id);
    expect(a).toMatchObject({ admitted: true, holdId: "" });
    expect([read.reserved, read.remaining, read.turns_used]).toEqual([0.25, 0.75, 1]);
    expect(read.tree.turns).toEqual([expect.objectContaining({ turn: 1, status: "admitted", reserved: 0.25 })]);
  });

  it("settles a served turn into spent and refunds a failed turn's money but not its turn", async () => {
    const { org, agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1 });
    await servedTurn(org, run.id, USD / 10n);
    const failedId = requestId();
    await turn(org, run.id, USD / 2n, { requestId: failedId });
    await l.closeHolds({ releases: [{ holdId: "", orgId: org, requestId: failedId, runTurn: runTurn(run.id, { model: "", finishReason: "" }) }] });

    const read = await getRun(agent, run.id);
    expect([read.spent, read.reserved, read.remaining, read.turns_used, read.status]).toEqual([0.1, 0, 0.9, 2, "open"]);
    expect(read.tree.turns.map((t: { status: string; cost: number }) => [t.status, t.cost])).toEqual([["served", 0.1], ["failed", 0]]);
  });

  it("refuses the turn after the turn limit with 403 budget_exceeded scope run", async () => {
    const { org, agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1, max_turns: 2 });
    await servedTurn(org, run.id, 1n);
    await servedTurn(org, run.id, 1n);

    const refused = await turn(org, run.id, 1n);
    expect(refused.admitted).toBe(false);
    expect(refused.refusal).toMatchObject({ httpStatus: 403, code: "budget_exceeded", scope: "run", subjectId: run.id });
    expect(refused.refusal?.message).toContain("all 2 of its turns");
  });

  it("checks the tool-call limit at admission, so one turn may pass it by its own calls", async () => {
    const { org, agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1, max_tool_calls: 3 });
    await servedTurn(org, run.id, 1n, { finishReason: "tool_calls", toolCalls: 2 });
    await servedTurn(org, run.id, 1n, { finishReason: "tool_calls", toolCalls: 4 });

    const refused = await turn(org, run.id, 1n);
    expect((await getRun(agent, run.id)).tool_calls_used).toBe(6);
    expect(refused.refusal).toMatchObject({ httpStatus: 403, scope: "run" });
  });

  it("exhausts the run at settlement when spend reaches the budget, then refuses turns with 409 naming it", async () => {
    const { org, agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1 });
    await servedTurn(org, run.id, USD / 2n);
    const open = await getRun(agent, run.id);
    await servedTurn(org, run.id, USD / 2n);

    const read = await getRun(agent, run.id);
    const refused = await turn(org, run.id, 1n);
    expect(open.status).toBe("open");
    expect([read.status, read.spent, read.remaining, read.tree.terminal_status]).toEqual(["exhausted", 1, 0, "exhausted"]);
    expect(refused.refusal).toMatchObject({ httpStatus: 409, code: "conflict", scope: "run", runStatus: "exhausted" });
  });

  it("refuses a turn whose run is at its budget with reservations in flight (403)", async () => {
    const { org, agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1 });
    expect((await turn(org, run.id, USD)).admitted).toBe(true);

    const refused = await turn(org, run.id, 1n);
    expect(refused.refusal).toMatchObject({ httpStatus: 403, code: "budget_exceeded", scope: "run" });
    expect(refused.refusal?.message).toContain("reached its budget of $1.00");
  });

  it("names the key ceiling, then the workspace budget, before the run", async () => {
    const { org, agent, owner } = tenant();
    const ws = workspaceId();
    const run = await openRun(agent, { budget_usd: 1, max_turns: 1 });
    await servedTurn(org, run.id, 1n);
    const atCeiling = keyCeiling({ limitNanodollars: 0n });
    await l.http("PUT", `/v1/workspaces/${ws}/budgets/daily`, { ...owner, workspace: ws }, { limit_usd: 0 });

    const byKey = await turn(org, run.id, 1n, { ceilings: [atCeiling], workspaceId: ws });
    const byWorkspace = await turn(org, run.id, 1n, { workspaceId: ws });
    const byRun = await turn(org, run.id, 1n);
    expect([byKey.refusal?.scope, byWorkspace.refusal?.scope, byRun.refusal?.scope]).toEqual(["key", "workspace", "run"]);
  });

  it("reserves on the key ceiling and the run together, and releases neither when the run refuses", async () => {
    const { org, agent } = tenant();
    const ceiling = keyCeiling({ limitNanodollars: 10n * USD });
    const run = await openRun(agent, { budget_usd: 1 });
    const a = await turn(org, run.id, USD / 2n, { ceilings: [ceiling] });
    const atRun = await turn(org, run.id, USD / 2n, { ceilings: [ceiling] });
    const refused = await turn(org, run.id, 1n, { ceilings: [ceiling] });

    expect(a.holdId).toMatch(/^hold_/);
    expect(atRun.admitted).toBe(true);
    expect(refused.refusal?.scope).toBe("run");
    expect(await l.used(ceiling)).toBe(USD);
  });

  it("admits a request id again as the same turn", async () => {
    const { org, agent } = tenant();
    const ceiling = keyCeiling();
    const run = await openRun(agent, { budget_usd: 1 });
    const id = requestId();
    const first = await turn(org, run.id, 10n, { requestId: id, ceilings: [ceiling] });
    const again = await turn(org, run.id, 10n, { requestId: id, ceilings: [ceiling] });

    expect(again.holdId).toBe(first.holdId);
    expect((await getRun(agent, run.id)).turns_used).toBe(1);
  });

  it("checks a dry run without reserving or counting a turn", async () => {
    const { org, agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1 });
    const dry = await l.admit({ orgId: org, runId: run.id, worstCaseNanodollars: USD, dryRun: true, isByok: true });

    expect(dry.admitted).toBe(true);
    expect((await getRun(agent, run.id)).turns_used).toBe(0);
  });

  it("answers NOT_FOUND for another organisation's run and INVALID_ARGUMENT naming run_id for a malformed one", async () => {
    const { agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1 });
    await expect(turn(orgId(), run.id, 1n)).rejects.toMatchObject({ status: 404 });
    await expect(turn(orgId(), "not-a-run", 1n)).rejects.toMatchObject({ status: 400, details: { field: "run_id" } });
  });

  it("never lets racing turns reserve past the run's budget by more than one turn", async () => {
    const { org, agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1 });
    const answers = await Promise.all(Array.from({ length: 12 }, () => turn(org, run.id, USD / 4n)));

    expect(answers.filter((a) => a.admitted)).toHaveLength(4);
    expect((await getRun(agent, run.id)).reserved).toBe(1);
  });

  it("gives back the reservation of a turn never reported once it expires, keeping the turn", async () => {
    const { org, agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1 });
    await turn(org, run.id, USD / 2n);
    l.clock.advance(61_000);

    await waitFor(async () => (await getRun(agent, run.id)).reserved === 0);
    const read = await getRun(agent, run.id);
    expect([read.turns_used, read.tree.turns[0].status]).toEqual([1, "expired"]);
  });
});

describe("detectors, resume and close", () => {
  it("pauses for cost velocity at settlement, refuses turns while paused, and resumes with the counters cleared", async () => {
    const { org, agent, owner } = tenant();
    const run = await openRun(agent, { budget_usd: 10, max_cost_per_minute_usd: 1 });
    await servedTurn(org, run.id, USD);
    await servedTurn(org, run.id, 1n);

    const paused = await getRun(agent, run.id);
    const refused = await turn(org, run.id, 1n);
    const resumed = await l.http("POST", `/v1/runs/${run.id}/resume`, owner);
    expect([paused.status, paused.pause_reason, paused.paused_at]).toEqual(["paused", "cost_velocity", l.clock.now().toISOString()]);
    expect(refused.refusal).toMatchObject({ httpStatus: 409, runStatus: "paused" });
    expect(resumed.status).toBe(200);
    expect(resumed.json.data).toMatchObject({ status: "open", pause_reason: null, paused_at: null, turns_used: 2, spent: 1.000000001 });
    expect((await turn(org, run.id, 1n)).admitted).toBe(true);
  });

  it("pauses for consecutive tool calls without progress and resumes with that counter at zero", async () => {
    const { org, agent } = tenant();
    const run = await openRun(agent, { budget_usd: 10, max_tool_calls_without_progress: 2 });
    await servedTurn(org, run.id, 1n, { finishReason: "tool_calls", toolCalls: 2 });
    await servedTurn(org, run.id, 1n, { finishReason: "tool_calls", toolCalls: 1 });

    const paused = await getRun(agent, run.id);
    const resumed = await l.http("POST", `/v1/runs/${run.id}/resume`, agent);
    expect([paused.status, paused.pause_reason, paused.tool_calls_without_progress]).toEqual(["paused", "no_progress", 3]);
    expect(resumed.json.data).toMatchObject({ status: "open", tool_calls_without_progress: 0, tool_calls_used: 3 });
  });

  it("answers 409 naming the status when resuming a run that is not paused", async () => {
    const { agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1 });
    const res = await l.http("POST", `/v1/runs/${run.id}/resume`, agent);
    expect([res.status, res.json.error.code, res.json.error.details.status]).toEqual([409, "conflict", "open"]);
  });

  it("closes as completed by default or cancelled, and answers 409 naming the status when closed again", async () => {
    const { org, agent, owner } = tenant();
    const a = await openRun(agent, { budget_usd: 1 });
    const b = await openRun(agent, { budget_usd: 1 });
    l.clock.advance(1_000);

    const completed = await l.http("POST", `/v1/runs/${a.id}/close`, agent);
    const cancelled = await l.http("POST", `/v1/runs/${b.id}/close`, owner, { status: "cancelled" });
    const again = await l.http("POST", `/v1/runs/${a.id}/close`, owner, { status: "cancelled" });
    const turnAfter = await turn(org, a.id, 1n);
    expect(completed.json.data).toMatchObject({ status: "completed", closed_at: l.clock.now().toISOString() });
    expect(cancelled.json.data.status).toBe("cancelled");
    expect([again.status, again.json.error.details.status]).toEqual([409, "completed"]);
    expect(again.json.error.message).toContain("completed");
    expect(turnAfter.refusal).toMatchObject({ httpStatus: 409, runStatus: "completed" });
  });

  it.each<[string, unknown]>([
    ["status", { status: "exhausted" }],
    ["status", { status: 1 }],
    ["reason", { reason: "done" }],
  ])("answers 400 naming %s for a bad close body", async (field, body) => {
    const { agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1 });
    const res = await l.http("POST", `/v1/runs/${run.id}/close`, agent, body);
    expect([res.status, res.json.error.details.field]).toEqual([400, field]);
  });

  it("lets a finance role read runs but not close them, and a developer close them", async () => {
    const { org, agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1 });
    const finance: Caller = { orgId: org, role: "billing" };
    expect((await l.http("GET", `/v1/runs/${run.id}`, finance)).status).toBe(200);
    expect((await l.http("POST", `/v1/runs/${run.id}/close`, finance)).status).toBe(403);
    expect((await l.http("POST", `/v1/runs/${run.id}/close`, { orgId: org, role: "member" })).status).toBe(200);
  });
});

describe("reading runs", () => {
  it("returns the tree: per-turn cost, cache hit rate, failed tool calls, model switches, terminal status", async () => {
    const { org, agent } = tenant();
    const run = await openRun(agent, { budget_usd: 1 });
    await servedTurn(org, run.id, 100n, { promptTokens: 100n, cachedTokens: 0n, finishReason: "tool_calls", toolCalls: 2, failedToolCalls: 1 });
    await servedTurn(org, run.id, 200n, { promptTokens: 100n, cachedTokens: 50n, model: "anthropic/claude-haiku" });
    await servedTurn(org, run.id, 300n, { promptTokens: 200n, cachedTokens: 150n, model: "anthropic/claude-haiku" });
    await l.http("POST", `/v1/runs/${run.id}/close`, agent);

    const read = await getRun(agent, run.id);
    expect(read.tree.turns.map((t: Record<string, unknown>) => [t.turn, t.cost, t.cache_hit_rate, t.model_switch, t.failed_tool_calls])).toEqual([
      [1, 1e-7, 0, false, 1],
      [2, 2e-7, 0.5, true, 0],
      [3, 3e-7, 0.75, false, 0],
    ]);
    expect(read.tree).toMatchObject({ cache_hit_rate: 0.5, failed_tool_calls: 1, model_switches: 1, terminal_status: "completed" });
  });

  it("lists the organisation's runs newest first, filtered by one status, capped at 100", async () => {
    const { agent, owner } = tenant();
    const first = await openRun(agent, { budget_usd: 1 });
    l.clock.advance(1_000);
    const second = await openRun(agent, { budget_usd: 1 });
    await l.http("POST", `/v1/runs/${first.id}/close`, agent);
    const other = tenant();
    await openRun(other.agent, { budget_usd: 1 });

    const all = await l.http("GET", "/v1/runs?limit=500", owner);
    const completed = await l.http("GET", "/v1/runs?status=completed", agent);
    expect(all.json.data.map((r: { id: string }) => r.id)).toEqual([second.id, first.id]);
    expect(completed.json.data.map((r: { id: string }) => r.id)).toEqual([first.id]);
  });

  it.each<[string, string]>([
    ["query.status", "/v1/runs?status=open,paused"],
    ["query.status", "/v1/runs?status=done"],
    ["query.limit", "/v1/runs?limit=0"],
    ["query.limit", "/v1/runs?limit=many"],
    ["id", "/v1/runs/not-a-run"],
  ])("answers 400 naming %s for %s", async (field, path) => {
    const res = await l.http("GET", path, tenant().owner);
    expect([res.status, res.json.error.details.field]).toEqual([400, field]);
  });

  it("answers 404 for another organisation's run", async () => {
    const run = await openRun(tenant().agent, { budget_usd: 1 });
    const res = await l.http("GET", `/v1/runs/${run.id}`, tenant().owner);
    expect(res.status).toBe(404);
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}
