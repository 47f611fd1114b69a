import { gatewayClient, startFakeOpenAi, startStack, type FakeUpstream, type Stack } from "@router/testkit";

/**
 * A guardrail through the separate-process stack: created and assigned to an inference key through
 * the gateway (forwarded to routing with the signed identity), then applied by routing's Plan to
 * that key's chat completions, over the request's own preferences, and named in `no_route`.
 */
describe("guardrails through the separate-process stack", () => {
  let stack: Stack;
  let groq: FakeUpstream;
  let together: FakeUpstream;
  let mgmt: ReturnType<typeof gatewayClient>;
  let guarded: ReturnType<typeof gatewayClient>;
  let free: ReturnType<typeof gatewayClient>;
  const MODEL = "meta-llama/llama-4-scout";
  const ask = { model: MODEL, messages: [{ role: "user", content: "Who serves?" }] };

  beforeAll(async () => {
    [groq, together] = await Promise.all([startFakeOpenAi(), startFakeOpenAi()]);
    stack = await startStack({ providerBaseUrls: { groq: groq.url, together: together.url } });
    const org = await stack.createOrg("Guarded Co");
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    for (const [provider, key] of [
      ["groq", "gsk-guarded-0001"],
      ["together", "tg-guarded-0002"],
    ]) {
      expect((await mgmt.post("/v1/provider-keys", { provider, api_key: key })).status).toBe(201);
    }
    const guardedKey = await mgmt.post("/v1/keys", { name: "guarded" });
    const freeKey = await mgmt.post("/v1/keys", { name: "free" });
    guarded = gatewayClient(stack.gatewayUrl, guardedKey.json.data.key as string);
    free = gatewayClient(stack.gatewayUrl, freeKey.json.data.key as string);

    const created = await mgmt.post("/v1/guardrails", { name: "together only", allowed_providers: ["together"] });
    expect(created.status).toBe(201);
    const assigned = await mgmt.post(`/v1/guardrails/${created.json.data.id}/assignments`, { subject_type: "key", subject_id: guardedKey.json.data.hash });
    expect(assigned.status).toBe(201);
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([groq, together].map((f) => f?.close()));
  });

  afterEach(() => {
    if (stack && process.env.E2E_LOGS) process.stderr.write(stack.logs());
  });

  it("lists the guardrail with its assignment", async () => {
    const res = await mgmt.get("/v1/guardrails");
    expect(res.status).toBe(200);
    expect(res.json.data).toHaveLength(1);
    expect(res.json.data[0]).toMatchObject({ name: "together only", provider_allowlist: ["together"], assignments: [{ subject_type: "key" }] });
  });

  it("serves the guarded key from the allowed provider even when the request orders another first", async () => {
    together.script({ text: "Together here.", usage: { prompt: 3, completion: 2 } });
    const res = await guarded.post("/v1/chat/completions", { ...ask, provider: { order: ["groq"] } });
    expect(res.status).toBe(200);
    expect(together.requests).toHaveLength(1);
    expect(groq.requests).toHaveLength(0);

    // Another key of the organisation is not restricted: its order is followed.
    groq.script({ text: "Groq here.", usage: { prompt: 3, completion: 2 } });
    expect((await free.post("/v1/chat/completions", { ...ask, provider: { order: ["groq"] } })).status).toBe(200);
    expect(groq.requests).toHaveLength(1);
  });

  it("answers 404 no_route naming the guardrail and the preference when nothing is left", async () => {
    const res = await guarded.post("/v1/chat/completions", { ...ask, provider: { only: ["groq"] } });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe("no_route");
    expect(res.json.error.details.unsatisfied_filters).toEqual(expect.arrayContaining(["guardrail.allowed_providers", "provider.only"]));
  });
});
