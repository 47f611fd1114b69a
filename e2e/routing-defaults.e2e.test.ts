import { gatewayClient, startFakeAnthropic, startFakeOpenAi, startStack, type FakeUpstream, type JsonResponse, type Stack } from "@router/testkit";

/**
 * Account routing defaults across the separate-process stack: set through the gateway (which
 * forwards to routing with the signed identity), then used by routing's Plan for the organisation's
 * chat completions: the default model when a request names none, and the account's fallback model
 * when the requested model's only provider fails.
 */
describe("account routing defaults through the separate-process stack", () => {
  let stack: Stack;
  let openai: FakeUpstream;
  let anthropic: FakeUpstream;
  let mgmtKey: string;
  let inference: ReturnType<typeof gatewayClient>;
  let inferenceKey: string;

  const putDefaults = async (key: string, body: unknown): Promise<JsonResponse> => {
    const res = await fetch(`${stack.gatewayUrl}/v1/routing/defaults`, {
      method: "PUT",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: JSON.parse(text) as Record<string, any> };
  };

  beforeAll(async () => {
    [openai, anthropic] = await Promise.all([startFakeOpenAi(), startFakeAnthropic()]);
    stack = await startStack({ providerBaseUrls: { openai: openai.url, anthropic: anthropic.url } });
    const org = await stack.createOrg("Defaults Co");
    mgmtKey = org.managementKey;
    const mgmt = gatewayClient(stack.gatewayUrl, mgmtKey);
    for (const [provider, key] of [
      ["openai", "sk-openai-defaults-0001"],
      ["anthropic", "sk-ant-defaults-0002"],
    ]) {
      expect((await mgmt.post("/v1/provider-keys", { provider, api_key: key })).status).toBe(201);
    }
    const created = await mgmt.post("/v1/keys", { name: "app" });
    expect(created.status).toBe(201);
    inferenceKey = created.json.data.key as string;
    inference = gatewayClient(stack.gatewayUrl, inferenceKey);

    const set = await putDefaults(mgmtKey, {
      default_model: "openai/gpt-4o-mini",
      fallback_models: ["anthropic/claude-3.5-haiku"],
    });
    expect(set.status).toBe(200);
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([openai, anthropic].map((f) => f?.close()));
  });

  afterEach(() => {
    if (stack && process.env.E2E_LOGS) process.stderr.write(stack.logs());
  });

  it("reads the defaults back through the gateway with a management key, and refuses an inference key", async () => {
    const res = await gatewayClient(stack.gatewayUrl, mgmtKey).get("/v1/routing/defaults");
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({
      default_model: "openai/gpt-4o-mini",
      fallback_models: ["anthropic/claude-3.5-haiku"],
      default_sort: null,
      lock_sort: false,
    });
    expect(res.json.data.updated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    expect((await inference.get("/v1/routing/defaults")).status).toBe(403);
    const refused = await putDefaults(inferenceKey, { default_model: "anthropic/claude-3.5-haiku" });
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe("permission_denied");
  });

  it("serves a request that names no model with the account's default model", async () => {
    openai.script({ text: "Default speaking.", usage: { prompt: 4, completion: 2 } });

    const res = await inference.post("/v1/chat/completions", { messages: [{ role: "user", content: "Who answers?" }] });

    expect(res.status).toBe(200);
    expect(res.json.model).toBe("openai/gpt-4o-mini");
    expect(res.json.choices[0].message.content).toBe("Default speaking.");
    expect((openai.requests.at(-1)?.body as { model: string }).model).toBe("gpt-4o-mini");
  });

  it("falls back to the account's fallback model when the requested model's only provider fails", async () => {
    openai.script({ failure: { kind: "status", status: 503, code: "overloaded" } });
    anthropic.script({ text: "Fallback here.", usage: { prompt: 6, completion: 2 } });
    const openaiBefore = openai.requests.length;

    const res = await inference.post("/v1/chat/completions", {
      model: "openai/gpt-4o",
      messages: [{ role: "user", content: "Hello?" }],
    });

    expect(res.status).toBe(200);
    expect(res.json.model).toBe("anthropic/claude-3.5-haiku");
    expect(res.json.choices[0].message.content).toBe("Fallback here.");
    expect(openai.requests.length).toBe(openaiBefore + 1);
    expect(anthropic.requests.at(-1)?.headers["x-api-key"]).toBe("sk-ant-defaults-0002");
  });
});
