import { gatewayClient, startFakeOpenAi, startStack, waitFor, type FakeUpstream, type Stack } from "@router/testkit";

type Client = ReturnType<typeof gatewayClient>;

/** One completion as activity recorded it: what the report must add up. */
interface Served {
  id: string;
  workspace: string;
  model: string;
  agent: string | null;
  createdAt: string;
  promptTokens: number;
  completionTokens: number;
  /** The sum of the request's usage-line costs: its list price in nanodollars. */
  listNanos: bigint;
}

const sum = (xs: bigint[]): bigint => xs.reduce((a, b) => a + b, 0n);

/**
 * Client reports end to end: gateway, routing, ledger, activity and reports as separate processes
 * on real Postgres, Redis and the Redis Streams bus. Completions in two workspaces of one
 * organisation reach the reports service as events; each workspace's report adds up exactly the
 * list costs activity recorded for that workspace's requests, and another organisation cannot read
 * it.
 */
describe("client reports through the separate-process stack", () => {
  let stack: Stack;
  let openai: FakeUpstream;
  let agency: Client;
  let stranger: Client;
  const workspaces: Record<"alpha" | "beta", { id: string; name: string }> = {
    alpha: { id: "", name: "Client Alpha" },
    beta: { id: "", name: "Client Beta" },
  };
  const served: Served[] = [];

  beforeAll(async () => {
    openai = await startFakeOpenAi();
    stack = await startStack({ providerBaseUrls: { openai: openai.url } });
    const [own, other] = await Promise.all([stack.createOrg("Northwind Agency"), stack.createOrg("Stranger Co")]);
    agency = gatewayClient(stack.gatewayUrl, own.managementKey);
    stranger = gatewayClient(stack.gatewayUrl, other.managementKey);
    expect((await agency.post("/v1/provider-keys", { provider: "openai", api_key: "sk-northwind-0001" })).status).toBe(201);

    const keys: Record<string, Client> = {};
    for (const which of ["alpha", "beta"] as const) {
      const ws = await agency.post("/v1/workspaces", { name: workspaces[which].name });
      expect(ws.status).toBe(201);
      workspaces[which].id = ws.json.data.id as string;
      const key = await agency.post("/v1/keys", { name: `${which} app`, workspace_id: workspaces[which].id });
      expect(key.status).toBe(201);
      keys[which] = gatewayClient(stack.gatewayUrl, key.json.data.key as string);
    }

    // Alpha: three completions on two models and two agents; beta: two on one model, no agent.
    const calls: Array<{ which: "alpha" | "beta"; model: string; agent?: string; usage: { prompt: number; completion: number } }> = [
      { which: "alpha", model: "openai/gpt-4o-mini", agent: "planner", usage: { prompt: 1200, completion: 345 } },
      { which: "alpha", model: "openai/gpt-4o", agent: "planner", usage: { prompt: 77, completion: 1001 } },
      { which: "alpha", model: "openai/gpt-4o-mini", agent: "writer", usage: { prompt: 9, completion: 4 } },
      { which: "beta", model: "openai/gpt-4o-mini", usage: { prompt: 500, completion: 250 } },
      { which: "beta", model: "openai/gpt-4o-mini", usage: { prompt: 31, completion: 7 } },
    ];
    for (const c of calls) {
      openai.script({ text: "ok", usage: c.usage });
      const res = await keys[c.which]!.post(
        "/v1/chat/completions",
        { model: c.model, messages: [{ role: "user", content: "Report me" }] },
        c.agent ? { "X-Router-Agent": c.agent } : {},
      );
      expect(res.status).toBe(200);
      served.push({
        id: res.json.id as string,
        workspace: workspaces[c.which].id,
        model: c.model,
        agent: c.agent ?? null,
        createdAt: "",
        promptTokens: c.usage.prompt,
        completionTokens: c.usage.completion,
        listNanos: 0n,
      });
    }

    // Activity's record of each request: its creation time and its usage lines at list price.
    for (const s of served) {
      const record = await waitFor(
        async () => {
          const res = await agency.get(`/v1/activity/requests/${s.id}`);
          return res.status === 200 ? res.json.data : undefined;
        },
        { timeoutMs: 15_000, what: `activity record ${s.id}` },
      );
      expect(record.workspace_id).toBe(s.workspace);
      s.createdAt = record.created_at as string;
      s.listNanos = sum((record.usage_lines as Array<{ cost_nanodollars: string }>).map((l) => BigInt(l.cost_nanodollars)));
      expect(s.listNanos).toBeGreaterThan(0n);
    }
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await openai?.close();
  });

  afterEach(() => {
    const state = expect.getState();
    if (state.assertionCalls > 0 && stack && process.env.E2E_LOGS) process.stderr.write(stack.logs());
  });

  /** The report of a workspace for the month its requests were made in, once every one of them is counted. */
  const reportOnceCounted = async (workspace: string) => {
    const mine = served.filter((s) => s.workspace === workspace);
    const month = mine[0]!.createdAt.slice(0, 7);
    return waitFor(
      async () => {
        const res = await agency.get(`/v1/reports/workspaces/${workspace}?month=${month}`);
        expect(res.status).toBe(200);
        return res.json.data.totals.requests === mine.length ? res.json.data : undefined;
      },
      { timeoutMs: 15_000, what: `the report of ${workspace} counting ${mine.length} requests` },
    );
  };

  it("adds up each workspace's requests at list price, to the nanodollar, by model, agent and day", async () => {
    for (const which of ["alpha", "beta"] as const) {
      const ws = workspaces[which];
      const mine = served.filter((s) => s.workspace === ws.id);
      const report = await reportOnceCounted(ws.id);

      expect(report.workspace).toEqual({ id: ws.id, name: ws.name, name_in_month: ws.name });
      expect(report.totals).toMatchObject({
        requests: mine.length,
        requests_by_status: { complete: mine.length, error: 0, refused: 0, cancelled: 0 },
        prompt_tokens: mine.reduce((a, s) => a + s.promptTokens, 0),
        completion_tokens: mine.reduce((a, s) => a + s.completionTokens, 0),
        spend_nanodollars: sum(mine.map((s) => s.listNanos)).toString(),
      });
      const perModel = Object.fromEntries(
        [...new Set(mine.map((s) => s.model))].map((m) => [m, sum(mine.filter((s) => s.model === m).map((s) => s.listNanos)).toString()]),
      );
      expect(Object.fromEntries(report.by_model.map((l: { model: string; spend_nanodollars: string }) => [l.model, l.spend_nanodollars]))).toEqual(perModel);
      const perAgent = Object.fromEntries(
        [...new Set(mine.map((s) => s.agent))].map((a) => [String(a), sum(mine.filter((s) => s.agent === a).map((s) => s.listNanos)).toString()]),
      );
      expect(Object.fromEntries(report.by_agent.map((l: { agent: string | null; spend_nanodollars: string }) => [String(l.agent), l.spend_nanodollars]))).toEqual(perAgent);
      const days = report.by_day.filter((d: { requests: number }) => d.requests > 0);
      expect(days.map((d: { date: string }) => d.date)).toEqual([...new Set(mine.map((s) => s.createdAt.slice(0, 10)))]);
    }
  });

  it("carries the organisation's branding, set through the gateway", async () => {
    const set = await agency.put("/v1/reports/branding", { brand_name: "Northwind", brand_footer: "Prepared by Northwind" });
    expect(set.status).toBe(200);
    expect(set.json.data).toEqual({ org_name: "Northwind Agency", brand_name: "Northwind", brand_logo: null, brand_footer: "Prepared by Northwind" });

    const report = await agency.get(`/v1/reports/workspaces/${workspaces.alpha.id}`);
    expect(report.status).toBe(200);
    expect(report.json.data.branding).toEqual(set.json.data);

    const svgAsPng = `data:image/png;base64,${Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'/>").toString("base64")}`;
    const refused = await agency.put("/v1/reports/branding", { brand_logo: svgAsPng });
    expect(refused.status).toBe(400);
    expect(refused.json.error.details.field).toBe("brand_logo");
  });

  it("answers 404 for another organisation's workspace and 400 for a malformed id, and shows nothing of it", async () => {
    const theirs = await stranger.get(`/v1/reports/workspaces/${workspaces.alpha.id}`);
    expect(theirs.status).toBe(404);
    expect(theirs.text).not.toContain("Client Alpha");
    const malformed = await stranger.get("/v1/reports/workspaces/alpha");
    expect(malformed.status).toBe(400);
    expect(malformed.json.error.details.field).toBe("id");

    const ownWorkspaces = await stranger.get("/v1/workspaces");
    const own = ownWorkspaces.json.data[0] as { id: string };
    const empty = await stranger.get(`/v1/reports/workspaces/${own.id}`);
    expect(empty.status).toBe(200);
    expect(empty.json.data.totals).toMatchObject({ requests: 0, spend_nanodollars: "0" });
    expect(empty.json.data.branding).toMatchObject({ org_name: "Stranger Co", brand_name: null });
  });
});
