import { fromUsd } from "@router/money";
import { gatewayClient, startFakeOpenAi, startStack, waitFor, type FakeUpstream, type Stack } from "@router/testkit";

const HEADER =
  "created_at,request_id,client,key,requested_model,served_model,provider,status,error_code,byok,prompt_tokens,completion_tokens,billed_usd,list_price_usd,agent";

/**
 * Usage reporting end to end: completions through the separate-process stack reach activity over the
 * Redis Streams bus, and come back out of the gateway as the month's CSV, the activity totals and
 * the conversations.
 */
describe("activity export, totals and conversations through the separate-process stack", () => {
  let stack: Stack;
  let openai: FakeUpstream;
  let mgmt: ReturnType<typeof gatewayClient>;
  let workspaceId: string;
  const ids: string[] = [];

  const exportCsv = async (key: string, query: string) => {
    const res = await fetch(`${stack.gatewayUrl}/v1/activity/export${query}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };
  let managementKey: string;

  beforeAll(async () => {
    openai = await startFakeOpenAi();
    stack = await startStack({ providerBaseUrls: { openai: openai.url } });
    const org = await stack.createOrg("Reporting Co");
    managementKey = org.managementKey;
    mgmt = gatewayClient(stack.gatewayUrl, managementKey);
    expect((await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: "sk-openai-report-0001" })).status).toBe(201);
    const workspace = await mgmt.post("/v1/workspaces", { name: "=Client Alpha" });
    expect(workspace.status).toBe(201);
    workspaceId = workspace.json.data.id as string;
    const key = await mgmt.post("/v1/keys", { name: "alpha app", workspace_id: workspaceId });
    expect(key.status).toBe(201);
    const inference = gatewayClient(stack.gatewayUrl, key.json.data.key as string);

    for (const [i, agent] of ["planner", "planner", "critic"].entries()) {
      openai.script({ text: `answer ${i}`, usage: { prompt: 9 + i, completion: 4 } });
      const res = await inference.post(
        "/v1/chat/completions",
        { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: `question ${i}` }], session_id: "conv-1" },
        { "x-router-agent": agent },
      );
      expect(res.status).toBe(200);
      ids.push(res.json.id as string);
    }
    await waitFor(
      async () => {
        const rows = (await mgmt.get("/v1/activity?limit=50")).json.data as Array<{ id: string }> | undefined;
        return ids.every((id) => rows?.some((r) => r.id === id));
      },
      { timeoutMs: 15_000, what: "the three activity rows" },
    );
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await openai?.close();
  });

  it("exports the month's completions as CSV: documented columns, client and key names, billed and list prices", async () => {
    const res = await exportCsv(managementKey, "");

    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    const [header, ...rows] = res.text.trim().split("\n");
    expect(header).toBe(HEADER);
    expect(rows.map((r) => r.split(",")[1])).toEqual(ids);
    for (const [i, row] of rows.entries()) {
      const cells = row.split(",");
      // The workspace name looks like a formula, so it is written with a leading quote.
      expect(cells.slice(2, 12)).toEqual([
        "'=Client Alpha",
        "alpha app",
        "openai/gpt-4o-mini",
        "openai/gpt-4o-mini",
        "openai",
        "complete",
        "",
        "true",
        String(9 + i),
        "4",
      ]);
      expect(cells[14]).toBe(i === 2 ? "critic" : "planner");
      // BYOK: nothing billed; the list price is what the usage lines of the request cost.
      expect(cells[12]).toBe("0");
      const one = await mgmt.get(`/v1/activity/requests/${ids[i]}`);
      const lines = one.json.data.usage_lines as Array<{ cost_nanodollars: string }>;
      const listNanos = lines.reduce((sum, l) => sum + BigInt(l.cost_nanodollars), 0n);
      expect(listNanos).toBeGreaterThan(0n);
      expect(fromUsd(cells[13] ?? "")).toBe(listNanos);
    }
  });

  it("exports one workspace, refuses another organisation's workspace with 404 and a malformed one with 400", async () => {
    const own = await exportCsv(managementKey, `?workspace=${workspaceId}`);
    expect(own.status).toBe(200);
    expect(own.text.trim().split("\n")).toHaveLength(4);

    const other = await stack.createOrg("Someone Else");
    const theirs = await exportCsv(other.managementKey, `?workspace=${workspaceId}`);
    expect(theirs.status).toBe(404);
    const malformed = await exportCsv(other.managementKey, "?workspace=alpha");
    expect(malformed.status).toBe(400);
    expect((JSON.parse(malformed.text) as { error: { details: { field: string } } }).error.details.field).toBe("workspace");
  });

  it("gives only the header for a past month, and 400 naming month for a bad one", async () => {
    expect((await exportCsv(managementKey, "?month=2020-01")).text).toBe(`${HEADER}\n`);
    const bad = await exportCsv(managementKey, "?month=2020-13");
    expect(bad.status).toBe(400);
    expect((JSON.parse(bad.text) as { error: { details: { field: string } } }).error.details.field).toBe("month");
  });

  it("totals the completions beside an empty prior period", async () => {
    // Two days, so a run across UTC midnight still finds all three in the current period.
    const res = await mgmt.get(`/v1/activity/summary?days=2&workspace=${workspaceId}`);

    expect(res.status).toBe(200);
    expect(res.json.data.current).toMatchObject({ requests: 3, errors: 0, byok_requests: 3, prompt_tokens: 30, tokens: 42, cached_tokens: 0, cache_hit_rate: 0 });
    expect(res.json.data.current.blended_per_million).toBeGreaterThan(0);
    expect(res.json.data.prior).toMatchObject({ requests: 0, cache_hit_rate: null, blended_per_million: null });
    expect(res.json.data.daily).toHaveLength(2);
  });

  it("groups the completions of one session into a conversation", async () => {
    const res = await mgmt.get("/v1/activity/conversations");

    expect(res.status).toBe(200);
    expect(res.json.data).toEqual([
      expect.objectContaining({ session_id: "conv-1", generations: 3, errors: 0, tokens: 42, models: ["openai/gpt-4o-mini"], providers: ["openai"] }),
    ]);
  });
});
