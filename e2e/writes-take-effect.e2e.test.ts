import { gatewayClient, startFakeAnthropic, startFakeOpenAi, startStack, waitFor, type FakeUpstream, type Stack } from "@router/testkit";

type Client = ReturnType<typeof gatewayClient>;

const OPENAI_MODEL = "openai/gpt-4o-mini";
const ANTHROPIC_MODEL = "anthropic/claude-3.5-haiku";
const chat = (client: Client, model: string | undefined) =>
  client.post("/v1/chat/completions", { ...(model ? { model } : {}), max_tokens: 8, messages: [{ role: "user", content: "hi" }] });

/**
 * A configuration write binds on the very next request through the gateway that forwarded it,
 * although every layer caches what it reads: the gateway's plan cache, its privacy and logging
 * caches and its budget-subjects cache, and routing's own caches. Each case first sends a request
 * (so the old state is cached everywhere), writes, then sends the next request at once.
 */
describe("a configuration write binds on the serving gateway's very next request", () => {
  let stack: Stack;
  let openai: FakeUpstream;
  let anthropic: FakeUpstream;

  /** A new organisation with both providers' credentials and one inference key. */
  const newOrganisation = async (name: string) => {
    const org = await stack.createOrg(name);
    const mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    const credentials: Record<string, string> = {};
    for (const [provider, api_key] of [["openai", "sk-openai-writes-0001"], ["anthropic", "sk-ant-writes-0002"]] as const) {
      const added = await mgmt.post("/v1/provider-keys", { provider, api_key });
      expect(added.status).toBe(201);
      credentials[provider] = added.json.data.id as string;
    }
    const created = await mgmt.post("/v1/keys", { name: "app" });
    expect(created.status).toBe(201);
    return { mgmt, credentials, keyHash: created.json.data.hash as string, inference: gatewayClient(stack.gatewayUrl, created.json.data.key as string) };
  };

  beforeAll(async () => {
    [openai, anthropic] = await Promise.all([startFakeOpenAi(), startFakeAnthropic()]);
    stack = await startStack({ providerBaseUrls: { openai: openai.url, anthropic: anthropic.url } });
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([openai, anthropic].map((f) => f?.close()));
  });

  afterEach(() => {
    if (stack && process.env.E2E_LOGS) process.stderr.write(stack.logs());
  });

  it("serves a model-less request with the default model set just before", async () => {
    const { mgmt, inference } = await newOrganisation("Defaults Now");
    const before = await chat(inference, undefined);
    expect(before.status).toBe(400);
    expect(before.json.error.message).toMatch(/default model/);

    expect((await mgmt.put("/v1/routing/defaults", { default_model: OPENAI_MODEL })).status).toBe(200);
    const after = await chat(inference, undefined);

    expect(after.status).toBe(200);
    expect(after.json.model).toBe(OPENAI_MODEL);
  });

  it("uses the reverted preset version on the next request", async () => {
    const { mgmt, inference } = await newOrganisation("Preset Now");
    expect((await mgmt.post("/v1/presets", { slug: "pick", name: "Pick", body: { model: OPENAI_MODEL } })).status).toBe(201);
    expect((await mgmt.post("/v1/presets/pick/versions", { body: { model: ANTHROPIC_MODEL } })).status).toBe(201);
    const onVersion2 = await chat(inference, "@preset/pick");
    expect(onVersion2.status).toBe(200);
    expect(onVersion2.json.model).toBe(ANTHROPIC_MODEL);

    expect((await mgmt.post("/v1/presets/pick/revert", { version: 1 })).status).toBe(201);
    const reverted = await chat(inference, "@preset/pick");

    expect(reverted.status).toBe(200);
    expect(reverted.json.model).toBe(OPENAI_MODEL);
  });

  it("refuses a provider on the next request once a guardrail that excludes it is assigned to the key", async () => {
    const { mgmt, inference, keyHash } = await newOrganisation("Guardrail Now");
    expect((await chat(inference, ANTHROPIC_MODEL)).status).toBe(200);

    const guardrail = await mgmt.post("/v1/guardrails", { name: "openai only", allowed_providers: ["openai"] });
    expect(guardrail.status).toBe(201);
    expect((await mgmt.post(`/v1/guardrails/${guardrail.json.data.id}/assignments`, { subject_type: "key", subject_id: keyHash })).status).toBe(201);
    const refused = await chat(inference, ANTHROPIC_MODEL);

    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
    expect(refused.json.error).toBeDefined();
    expect((await chat(inference, OPENAI_MODEL)).status).toBe(200);
  });

  it("refuses to keep a response on the next request once the privacy policy demands zero data retention", async () => {
    const { mgmt, inference } = await newOrganisation("Privacy Now");
    const ask = () => inference.post("/v1/responses", { model: OPENAI_MODEL, input: "hi", store: true });
    expect((await ask()).status).toBe(200);

    expect((await mgmt.put("/v1/privacy", { zdr: true })).status).toBe(200);
    const refused = await ask();

    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ details: { policy: "privacy.zdr" } });
  });

  it("refuses to keep a response on the next request once the key is excluded from logging", async () => {
    const { mgmt, inference, keyHash } = await newOrganisation("Logging Now");
    const ask = () => inference.post("/v1/responses", { model: OPENAI_MODEL, input: "hi", store: true });
    expect((await ask()).status).toBe(200);

    expect((await mgmt.put("/v1/logging", { key_exclude: [keyHash] })).status).toBe(200);
    const refused = await ask();

    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ details: { policy: "logging.key_exclude" } });
  });

  it("stops using a provider credential on the next request once it is disabled", async () => {
    const { mgmt, inference, credentials } = await newOrganisation("Credential Now");
    expect((await chat(inference, ANTHROPIC_MODEL)).status).toBe(200);
    const anthropicCalls = anthropic.requests.length;

    expect((await mgmt.patch(`/v1/provider-keys/${credentials.anthropic}`, { disabled: true })).status).toBe(200);
    const refused = await chat(inference, ANTHROPIC_MODEL);

    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
    expect(anthropic.requests.length).toBe(anthropicCalls);
  });

  /**
   * A key of a new workspace spends through `gatewayUrl` until the workspace's spend is recorded; then a
   * daily budget below it is set through the same gateway, and the very next request must be refused.
   */
  const expectRefusedOnceBudgetSet = async (gatewayUrl: string, mgmt: Client): Promise<void> => {
    const ws = (await mgmt.post("/v1/workspaces", { name: "Spent" })).json.data.id as string;
    const inference = gatewayClient(gatewayUrl, (await mgmt.post("/v1/keys", { name: "ws", workspace_id: ws })).json.data.key as string);
    openai.script({ usage: { prompt: 1_000_000, completion: 0 } });
    expect((await chat(inference, OPENAI_MODEL)).status).toBe(200);
    await waitFor(
      async () => (((await mgmt.get("/v1/workspaces")).json.data as Array<Record<string, any>>).find((w) => w.id === ws)?.spend_this_month ?? 0) > 0.05,
      { timeoutMs: 15_000, intervalMs: 200, what: "the workspace's spend to be recorded" },
    );

    expect((await mgmt.put(`/v1/workspaces/${ws}/budgets/daily`, { limit_usd: 0.05 })).status).toBe(200);
    const refused = await chat(inference, OPENAI_MODEL);

    expect(refused.status).toBe(403);
    expect(refused.json.error).toMatchObject({ code: "budget_exceeded", details: { scope: "workspace" } });
  };

  it("refuses the next request once a workspace budget below what was spent is set", async () => {
    const { mgmt } = await newOrganisation("Budget Now");
    await expectRefusedOnceBudgetSet(stack.gatewayUrl, mgmt);
  });

  it("refuses the next request on a gateway whose Admit goes to another ledger replica than the one that took the budget", async () => {
    const other = await stack.startLedgerReplica();
    const gatewayUrl = await stack.startGatewayReplica({ grpcLedger: other });
    const org = await stack.createOrg("Budget Replicas");
    const mgmt = gatewayClient(gatewayUrl, org.managementKey);
    expect((await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: "sk-openai-writes-0003" })).status).toBe(201);
    // Its first request leaves the other replica holding the organisation's budgets (none) in memory.
    await expectRefusedOnceBudgetSet(gatewayUrl, mgmt);
  }, 60_000);
});
