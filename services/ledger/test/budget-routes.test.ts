import { orgId, startTestLedger, workspaceId, type Caller, type TestLedger } from "./ledger-fixture";

let l: TestLedger;
beforeAll(async () => {
  l = await startTestLedger({ label: "budget_routes" });
});
afterAll(() => l.close());

/** An organisation with one workspace the gateway has checked for every write. */
function tenant() {
  const org = orgId();
  const ws = workspaceId();
  const writer: Caller = { orgId: org, workspace: ws };
  return { org, ws, writer, reader: { orgId: org, role: "readonly" } as Caller };
}

describe("workspace budgets", () => {
  it("sets, lists (narrowest first), replaces and deletes a workspace's budgets", async () => {
    const { ws, writer, reader } = tenant();

    const set = await l.http("PUT", `/v1/workspaces/${ws}/budgets/monthly`, writer, { limit_usd: 50 });
    await l.http("PUT", `/v1/workspaces/${ws}/budgets/daily`, writer, { limit_usd: 2.5, include_byok: false });

    expect(set).toEqual({
      status: 200,
      json: {
        data: { workspace_id: ws, interval: "monthly", limit_usd: 50, limit_nanodollars: "50000000000", include_byok: true },
      },
    });
    expect((await l.http("GET", `/v1/workspaces/${ws}/budgets`, reader)).json).toEqual({
      data: [
        { interval: "daily", limit_nanodollars: "2500000000", include_byok: false },
        { interval: "monthly", limit_nanodollars: "50000000000", include_byok: true },
      ],
      next_cursor: null,
    });

    await l.http("PUT", `/v1/workspaces/${ws}/budgets/monthly`, writer, { limit_usd: 40 });
    expect((await l.http("DELETE", `/v1/workspaces/${ws}/budgets/daily`, writer)).json).toEqual({ data: { deleted: true } });
    expect((await l.http("GET", `/v1/workspaces/${ws}/budgets`, reader)).json.data).toEqual([
      { interval: "monthly", limit_nanodollars: "40000000000", include_byok: true },
    ]);
  });

  it("lists nothing for an unknown workspace or another organisation's, rather than a 404", async () => {
    const a = tenant();
    await l.http("PUT", `/v1/workspaces/${a.ws}/budgets/weekly`, a.writer, { limit_usd: 5 });
    const b = tenant();

    expect(await l.http("GET", `/v1/workspaces/${workspaceId()}/budgets`, b.reader)).toEqual({
      status: 200,
      json: { data: [], next_cursor: null },
    });
    expect((await l.http("GET", `/v1/workspaces/${a.ws}/budgets`, b.reader)).json.data).toEqual([]);
  });

  it("writes only for a workspace the gateway checked belongs to the caller (404 otherwise)", async () => {
    const { org, ws } = tenant();
    const unchecked = await l.http("PUT", `/v1/workspaces/${ws}/budgets/daily`, { orgId: org }, { limit_usd: 1 });
    const otherChecked = await l.http("PUT", `/v1/workspaces/${ws}/budgets/daily`, { orgId: org, workspace: workspaceId() }, {
      limit_usd: 1,
    });
    const deleting = await l.http("DELETE", `/v1/workspaces/${ws}/budgets/daily`, { orgId: org });

    for (const res of [unchecked, otherChecked, deleting]) expect(res.status).toBe(404);
    expect((await l.http("GET", `/v1/workspaces/${ws}/budgets`, { orgId: org })).json.data).toEqual([]);
  });

  it("answers 404 for deleting a budget that is not set", async () => {
    const { ws, writer } = tenant();
    const res = await l.http("DELETE", `/v1/workspaces/${ws}/budgets/weekly`, writer);
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe("not_found");
  });

  it.each<[string, string, string, unknown]>([
    ["a missing limit", "limit_usd", "daily", {}],
    ["a negative limit", "limit_usd", "daily", { limit_usd: -1 }],
    ["a limit given as text", "limit_usd", "daily", { limit_usd: "5" }],
    ["a limit past a billion dollars", "limit_usd", "daily", { limit_usd: 2e9 }],
    ["include_byok that is not a boolean", "include_byok", "daily", { limit_usd: 1, include_byok: "yes" }],
    ["an unknown field", "mode", "daily", { limit_usd: 1, mode: "soft" }],
    ["a body that is not an object", "body", "daily", [1]],
    ["an unknown interval", "interval", "hourly", { limit_usd: 1 }],
  ])("refuses %s with a 400 naming %s", async (_label, field, interval, body) => {
    const { ws, writer } = tenant();
    const res = await l.http("PUT", `/v1/workspaces/${ws}/budgets/${interval}`, writer, body);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ status: 400, code: "invalid_request", details: { field } });
  });

  it("refuses a malformed workspace id with a 400 naming id", async () => {
    const res = await l.http("GET", "/v1/workspaces/not-a-workspace/budgets", { orgId: orgId() });
    expect(res.status).toBe(400);
    expect(res.json.error.details.field).toBe("id");
  });

  it("refuses a daily budget above the weekly one, naming limit_usd, and keeps what was set", async () => {
    const { ws, writer } = tenant();
    await l.http("PUT", `/v1/workspaces/${ws}/budgets/weekly`, writer, { limit_usd: 10 });

    const res = await l.http("PUT", `/v1/workspaces/${ws}/budgets/daily`, writer, { limit_usd: 12 });

    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({
      details: { field: "limit_usd" },
      message: "limit_usd: a daily budget must be smaller than the weekly budget of $10.00",
    });
    expect((await l.http("GET", `/v1/workspaces/${ws}/budgets`, writer)).json.data).toHaveLength(1);
  });

  it("lets every role read and only config:write roles change budgets", async () => {
    const { org, ws } = tenant();
    const as = (role: Caller["role"]): Caller => ({ orgId: org, workspace: ws, role });

    expect((await l.http("GET", `/v1/workspaces/${ws}/budgets`, as("billing"))).status).toBe(200);
    expect((await l.http("PUT", `/v1/workspaces/${ws}/budgets/daily`, as("member"), { limit_usd: 1 })).status).toBe(200);
    for (const role of ["billing", "readonly"] as const) {
      const res = await l.http("PUT", `/v1/workspaces/${ws}/budgets/daily`, as(role), { limit_usd: 1 });
      expect(res.status).toBe(403);
      expect(res.json.error.code).toBe("permission_denied");
    }
    const inference = await l.http("GET", `/v1/workspaces/${ws}/budgets`, { orgId: org, credential: "inference" });
    expect(inference.status).toBe(403);
  });

  it("refuses a call without the gateway's signed identity", async () => {
    const res = await fetch(`http://127.0.0.1:${l.httpPort}/v1/agents`);
    expect(res.status).toBe(401);
  });
});

describe("agent budgets", () => {
  it("sets organisation-wide and workspace-scoped budgets for one agent, both listed on its row", async () => {
    const { org, ws, writer } = tenant();

    const orgWide = await l.http("PUT", "/v1/agents/planner/budgets/monthly", { orgId: org }, { limit_usd: 20 });
    const scoped = await l.http("PUT", "/v1/agents/planner/budgets/monthly", writer, {
      limit_usd: 5,
      mode: "soft",
      include_byok: false,
      workspace_id: ws,
    });

    expect(orgWide.json.data).toEqual({
      agent: "planner",
      interval: "monthly",
      limit_usd: 20,
      include_byok: true,
      mode: "hard",
      workspace_id: null,
    });
    expect(scoped.json.data).toEqual({
      agent: "planner",
      interval: "monthly",
      limit_usd: 5,
      include_byok: false,
      mode: "soft",
      workspace_id: ws,
    });
    const agents = await l.http("GET", "/v1/agents", { orgId: org, role: "readonly" });
    expect(agents.json.data).toEqual([
      {
        agent: "planner",
        last_seen: null,
        requests_this_month: 0,
        spend_this_month: 0,
        budgets: [orgWide.json.data, scoped.json.data],
      },
    ]);
  });

  it("deletes the workspace-scoped budget with workspace_id in the query, and the organisation-wide one without", async () => {
    const { org, ws, writer } = tenant();
    await l.http("PUT", "/v1/agents/coder/budgets/daily", { orgId: org }, { limit_usd: 2 });
    await l.http("PUT", "/v1/agents/coder/budgets/daily", writer, { limit_usd: 1, workspace_id: ws });

    const scoped = await l.http("DELETE", `/v1/agents/coder/budgets/daily?workspace_id=${ws}`, writer);
    expect(scoped.json).toEqual({ data: { deleted: true } });
    const left = (await l.http("GET", "/v1/agents", { orgId: org })).json.data[0].budgets;
    expect(left).toEqual([expect.objectContaining({ workspace_id: null, limit_usd: 2 })]);

    expect((await l.http("DELETE", "/v1/agents/coder/budgets/daily", { orgId: org })).status).toBe(200);
    expect((await l.http("DELETE", "/v1/agents/coder/budgets/daily", { orgId: org })).status).toBe(404);
  });

  it("keeps the narrower-is-smaller rule within one scope only", async () => {
    const { org, ws, writer } = tenant();
    await l.http("PUT", "/v1/agents/a1/budgets/weekly", { orgId: org }, { limit_usd: 10 });

    const scopedDaily = await l.http("PUT", "/v1/agents/a1/budgets/daily", writer, { limit_usd: 50, workspace_id: ws });
    const orgDaily = await l.http("PUT", "/v1/agents/a1/budgets/daily", { orgId: org }, { limit_usd: 50 });

    expect(scopedDaily.status).toBe(200);
    expect(orgDaily.status).toBe(400);
    expect(orgDaily.json.error.details.field).toBe("limit_usd");
  });

  it.each<[string, string, string, unknown]>([
    ["a malformed agent name", "agent", "/v1/agents/-bad/budgets/daily", { limit_usd: 1 }],
    ["an agent name past 64 characters", "agent", `/v1/agents/${"a".repeat(65)}/budgets/daily`, { limit_usd: 1 }],
    ["an unknown mode", "mode", "/v1/agents/ok/budgets/daily", { limit_usd: 1, mode: "strict" }],
    ["a malformed workspace_id", "workspace_id", "/v1/agents/ok/budgets/daily", { limit_usd: 1, workspace_id: "client-a" }],
    ["a missing limit", "limit_usd", "/v1/agents/ok/budgets/weekly", { mode: "soft" }],
    ["an unknown interval", "interval", "/v1/agents/ok/budgets/yearly", { limit_usd: 1 }],
  ])("refuses %s with a 400 naming %s", async (_label, field, path, body) => {
    const res = await l.http("PUT", path, { orgId: orgId() }, body);
    expect(res.status).toBe(400);
    expect(res.json.error.details.field).toBe(field);
  });

  it("refuses a budget scoped to a workspace the gateway did not check (404)", async () => {
    const res = await l.http("PUT", "/v1/agents/ok/budgets/daily", { orgId: orgId() }, { limit_usd: 1, workspace_id: workspaceId() });
    expect(res.status).toBe(404);
  });
});
