import { gatewayClient, startFakeOpenAi, startStack, waitFor, type FakeUpstream, type Stack } from "@router/testkit";

type Client = ReturnType<typeof gatewayClient>;
type Run = Record<string, any>;

// gpt-4o-mini lists at $0.15 per million prompt tokens: a reported million costs $0.15, while a
// turn's worst case (a few prompt bytes, max_tokens 8) is a tiny fraction of a cent.
const MODEL = "openai/gpt-4o-mini";
const EXPENSIVE = { usage: { prompt: 1_000_000, completion: 0 } };
const TOOL_CALLS = {
  toolCalls: [
    { name: "search", arguments: { q: "runs" } },
    { name: "fetch", arguments: "{not json" },
  ],
};

/**
 * Agent runs end to end: gateway, routing, ledger and activity as separate processes on Postgres
 * and the Redis Streams bus, a fake OpenAI upstream. The agent's inference key opens the run and
 * sends its turns (`run_id` on each chat completion); the ledger admits each turn against the run
 * over gRPC and settles it after the response; the run routes are forwarded to the ledger.
 */
describe("agent runs through the separate-process stack", () => {
  let stack: Stack;
  let openai: FakeUpstream;
  let mgmt: Client;
  let agent: Client;

  const open = async (body: Record<string, unknown>): Promise<Run> => {
    const res = await agent.post("/v1/runs", body);
    expect(res.status).toBe(201);
    return res.json.data as Run;
  };
  const read = async (id: string, client: Client = agent): Promise<Run> => {
    const res = await client.get(`/v1/runs/${id}`);
    expect(res.status).toBe(200);
    return res.json.data as Run;
  };
  const turn = (runId: string) =>
    agent.post("/v1/chat/completions", { model: MODEL, max_tokens: 8, run_id: runId, messages: [{ role: "user", content: "next step" }] });
  /** Settlement is after the response: waits until the run shows what it should. */
  const until = (id: string, check: (run: Run) => boolean, what: string): Promise<Run> =>
    waitFor(
      async () => {
        const run = await read(id);
        return check(run) && run;
      },
      { timeoutMs: 15_000, intervalMs: 100, what },
    );

  beforeAll(async () => {
    openai = await startFakeOpenAi();
    stack = await startStack({ providerBaseUrls: { openai: openai.url } });
    const org = await stack.createOrg("Runs Inc");
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    expect((await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: "sk-openai-runs-0001" })).status).toBe(201);
    const key = await mgmt.post("/v1/keys", { name: "agent" });
    agent = gatewayClient(stack.gatewayUrl, key.json.data.key as string);
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await openai?.close();
  });

  afterEach(() => {
    if (stack && process.env.E2E_LOGS) process.stderr.write(stack.logs());
  });

  it("opens a run with the agent's key only, runs turns up to the turn limit and returns the tree", async () => {
    expect((await mgmt.post("/v1/runs", { budget_usd: 1 })).status).toBe(403);
    const run = await open({ goal: "Answer the ticket", budget_usd: 1, max_turns: 3 });

    openai.script({ usage: { prompt: 100, completion: 10 } }, TOOL_CALLS, { usage: { prompt: 200, completion: 10, cached: 150 } });
    const answers = [await turn(run.id), await turn(run.id), await turn(run.id)];
    const fourth = await turn(run.id);

    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(fourth.status).toBe(403);
    expect(fourth.json.error).toMatchObject({ code: "budget_exceeded", details: { scope: "run" } });
    expect(fourth.json.error.message).toContain("all 3 of its turns");
    const settled = await until(run.id, (r) => r.tree.turns.every((t: { status: string }) => t.status === "served"), "three served turns");
    expect(settled).toMatchObject({ status: "open", turns_used: 3, tool_calls_used: 2, reserved: 0, tool_calls_without_progress: 0 });
    expect(settled.spent).toBeGreaterThan(0);
    expect(settled.remaining).toBeCloseTo(1 - settled.spent, 9);
    expect(settled.tree.turns.map((t: Run) => [t.turn, t.model, t.finish_reason, t.tool_calls, t.failed_tool_calls])).toEqual([
      [1, MODEL, "stop", 0, 0],
      [2, MODEL, "tool_calls", 2, 1],
      [3, MODEL, "stop", 0, 0],
    ]);
    expect(settled.tree.turns[2].cache_hit_rate).toBe(0.75);
    expect(settled.tree).toMatchObject({ failed_tool_calls: 1, model_switches: 0, terminal_status: null });
    // A management key reads the same run (usage:read).
    expect((await read(run.id, mgmt)).id).toBe(run.id);
  });

  it("exhausts the run when a turn's settlement reaches its budget, then refuses turns with 409 naming it", async () => {
    const run = await open({ budget_usd: 0.1 });
    openai.script(EXPENSIVE);
    expect((await turn(run.id)).status).toBe(200);

    const exhausted = await until(run.id, (r) => r.status === "exhausted", "the run to be exhausted");
    const refused = await turn(run.id);
    expect(exhausted).toMatchObject({ spent: 0.15, reserved: 0, remaining: -0.05 });
    expect(exhausted.tree.terminal_status).toBe("exhausted");
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({ code: "conflict", details: { scope: "run", status: "exhausted" } });
  });

  it("refunds a failed turn's money but not its turn", async () => {
    const run = await open({ budget_usd: 1 });
    openai.script({ failure: { kind: "status", status: 400, code: "invalid_request_error" } });
    expect((await turn(run.id)).status).toBeGreaterThanOrEqual(400);

    const failed = await until(run.id, (r) => r.tree.turns[0]?.status === "failed", "the failed turn");
    expect(failed).toMatchObject({ turns_used: 1, spent: 0, reserved: 0, remaining: 1 });
  });

  it("pauses the run for cost velocity at settlement, refuses turns while paused, and resumes it", async () => {
    const run = await open({ budget_usd: 10, max_cost_per_minute_usd: 0.1 });
    openai.script(EXPENSIVE);
    expect((await turn(run.id)).status).toBe(200);

    const paused = await until(run.id, (r) => r.status === "paused", "the run to pause");
    const refused = await turn(run.id);
    const resumed = await mgmt.post(`/v1/runs/${run.id}/resume`, {});
    const again = await mgmt.post(`/v1/runs/${run.id}/resume`, {});
    const after = await turn(run.id);

    expect(paused).toMatchObject({ pause_reason: "cost_velocity", spent: 0.15, turns_used: 1 });
    expect(paused.paused_at).not.toBeNull();
    expect(refused.status).toBe(409);
    expect(refused.json.error.details).toMatchObject({ scope: "run", status: "paused" });
    expect(resumed.status).toBe(200);
    expect(resumed.json.data).toMatchObject({ status: "open", pause_reason: null, spent: 0.15, turns_used: 1 });
    expect([again.status, again.json.error.details.status]).toEqual([409, "open"]);
    expect(after.status).toBe(200);
  });

  it("pauses the run when consecutive tool calls pass the no-progress limit", async () => {
    const run = await open({ budget_usd: 10, max_tool_calls_without_progress: 1 });
    openai.script(TOOL_CALLS);
    expect((await turn(run.id)).status).toBe(200);

    const paused = await until(run.id, (r) => r.status === "paused", "the run to pause");
    expect(paused).toMatchObject({ pause_reason: "no_progress", tool_calls_without_progress: 2 });
    const resumed = await agent.post(`/v1/runs/${run.id}/resume`, {});
    expect(resumed.json.data).toMatchObject({ status: "open", tool_calls_without_progress: 0, tool_calls_used: 2 });
  });

  it("closes a run, answers 409 naming its status when closed again, and refuses its turns", async () => {
    const run = await open({ budget_usd: 1 });
    const closed = await agent.post(`/v1/runs/${run.id}/close`, { status: "cancelled" });
    const again = await mgmt.post(`/v1/runs/${run.id}/close`, {});
    const refused = await turn(run.id);

    expect(closed.json.data).toMatchObject({ status: "cancelled" });
    expect(closed.json.data.closed_at).not.toBeNull();
    expect([again.status, again.json.error.details.status]).toEqual([409, "cancelled"]);
    expect([refused.status, refused.json.error.details.status]).toEqual([409, "cancelled"]);
    const listed = await mgmt.get("/v1/runs?status=cancelled");
    expect(listed.json.data.map((r: Run) => r.id)).toEqual([run.id]);
  });

  it("counts turns of a budgeted workspace and agent on the run and on both budgets (a spend lease admits the budgets, Admit the run)", async () => {
    const ws = (await mgmt.post("/v1/workspaces", { name: "Budgeted runs" })).json.data.id as string;
    expect((await mgmt.put(`/v1/workspaces/${ws}/budgets/monthly`, { limit_usd: 100 })).status).toBe(200);
    expect((await mgmt.put("/v1/agents/run-bot/budgets/monthly", { limit_usd: 100 })).status).toBe(200);
    const budgeted = gatewayClient(stack.gatewayUrl, (await mgmt.post("/v1/keys", { name: "budgeted agent", workspace_id: ws })).json.data.key as string);
    const opened = await budgeted.post("/v1/runs", { budget_usd: 1, max_turns: 2 });
    expect(opened.status).toBe(201);
    const runId = opened.json.data.id as string;
    const budgetedTurn = () =>
      budgeted.post(
        "/v1/chat/completions",
        { model: MODEL, max_tokens: 8, run_id: runId, messages: [{ role: "user", content: "next step" }] },
        { "x-router-agent": "run-bot" },
      );

    // $0.15 and $0.30 of prompt tokens; the third turn is over the run's turn limit.
    openai.script({ usage: { prompt: 1_000_000, completion: 0 } }, { usage: { prompt: 2_000_000, completion: 0 } });
    const statuses = [(await budgetedTurn()).status, (await budgetedTurn()).status];
    const third = await budgetedTurn();

    expect(statuses).toEqual([200, 200]);
    expect([third.status, third.json.error.details.scope]).toEqual([403, "run"]);
    const run = await waitFor(
      async () => {
        const r = (await budgeted.get(`/v1/runs/${runId}`)).json.data as Run;
        return Math.abs(r.spent - 0.45) < 1e-9 && r.reserved === 0 && r;
      },
      { timeoutMs: 15_000, intervalMs: 100, what: "both turns to settle on the run" },
    );
    expect(run).toMatchObject({ turns_used: 2, status: "open" });
    const spentOn = async (path: string, match: (row: Record<string, any>) => boolean) =>
      ((await mgmt.get(path)).json.data as Array<Record<string, any>>).find(match)?.spend_this_month as number | undefined;
    await waitFor(async () => Math.abs(((await spentOn("/v1/workspaces", (w) => w.id === ws)) ?? 0) - 0.45) < 1e-9, {
      timeoutMs: 15_000,
      intervalMs: 100,
      what: "the workspace budget to count both turns",
    });
    await waitFor(async () => Math.abs(((await spentOn("/v1/agents", (a) => a.agent === "run-bot")) ?? 0) - 0.45) < 1e-9, {
      timeoutMs: 15_000,
      intervalMs: 100,
      what: "the agent budget to count both turns",
    });
  });

  it("answers 400 naming run_id for a malformed one and 404 for a run that does not exist", async () => {
    const malformed = await agent.post("/v1/chat/completions", { model: MODEL, run_id: "my run", messages: [{ role: "user", content: "x" }] });
    const unknown = await turn("run_000000000000000000000000");
    expect([malformed.status, malformed.json.error.details.field]).toEqual([400, "run_id"]);
    expect(unknown.status).toBe(404);
  });
});
