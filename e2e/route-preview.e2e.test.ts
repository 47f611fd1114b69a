import { gatewayClient, startFakeOpenAi, startStack, writeOrderedCatalog, type FakeUpstream, type Stack } from "@router/testkit";

const MODEL = "meta-llama/llama-3.3-70b-instruct";

/**
 * `POST /v1/routing/preview` over the separate-process stack: the chat route's gates with no side
 * effect, refusals in the body, and a real request with the same seed routed as the preview said.
 */
describe("route preview", () => {
  let stack: Stack;
  let groq: FakeUpstream;
  let together: FakeUpstream;
  let mgmt: ReturnType<typeof gatewayClient>;
  let inference: ReturnType<typeof gatewayClient>;

  beforeAll(async () => {
    [groq, together] = await Promise.all([startFakeOpenAi(), startFakeOpenAi()]);
    stack = await startStack({
      providerBaseUrls: { groq: groq.url, together: together.url },
      extraEnv: { ROUTING_CATALOG_FILE: writeOrderedCatalog({ [MODEL]: ["groq", "together"] }) },
    });
    mgmt = gatewayClient(stack.gatewayUrl, (await stack.createOrg("Preview")).managementKey);
    for (const [provider, api_key] of [["groq", "gsk-preview-0001"], ["together", "tg-preview-0002"]]) {
      expect((await mgmt.post("/v1/provider-keys", { provider, api_key })).status).toBe(201);
    }
    inference = gatewayClient(stack.gatewayUrl, (await mgmt.post("/v1/keys", { name: "preview" })).json.data.key as string);
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([groq, together].map((f) => f?.close()));
  });

  it("says where a request would go, with no side effect, and a real request with the same seed goes there", async () => {
    const before = groq.requests.length + together.requests.length;
    const seeds = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"];
    const winners = new Set<string>();
    for (const seed of seeds) {
      const preview = await inference.post("/v1/routing/preview", { model: MODEL, routing_seed: seed });
      expect(preview.status).toBe(200);
      const data = preview.json.data;
      expect(data).toMatchObject({ requested: MODEL, strategy: "direct", would_dispatch: true, refusal: null, ordering: "sampled", routing_seed: seed });
      expect(data.cascade.map((c: { provider: string }) => c.provider).sort()).toEqual(["groq", "together"]);
      winners.add(data.winner.provider);

      const real = await inference.post(
        "/v1/chat/completions",
        { model: MODEL, routing_seed: seed, messages: [{ role: "user", content: "hi" }] },
        { "X-Router-Metadata": "enabled" },
      );
      expect(real.status).toBe(200);
      expect(real.json.router_metadata.served.provider).toBe(data.winner.provider);
    }
    // The seeds draw both endpoints first at least once: the preview is the draw, not a fixed order.
    expect(winners.size).toBe(2);
    // Only the real requests reached a provider.
    expect(groq.requests.length + together.requests.length - before).toBe(seeds.length);
  });

  it("answers refusals in the body, in the chat route's precedence", async () => {
    const unknown = await inference.post("/v1/routing/preview", { model: "nobody/nothing" });
    expect(unknown.status).toBe(200);
    expect(unknown.json.data).toMatchObject({ would_dispatch: false, winner: null, refusal: { code: "model_not_found" } });

    const capped = gatewayClient(
      stack.gatewayUrl,
      (await mgmt.post("/v1/keys", { name: "spent", limit: 0.000000001, limit_reset: "lifetime", include_byok_in_limit: true })).json.data.key as string,
    );
    groq.script({ text: "spent", usage: { prompt: 1000, completion: 10 } });
    together.script({ text: "spent", usage: { prompt: 1000, completion: 10 } });
    await capped.post("/v1/chat/completions", { model: MODEL, messages: [{ role: "user", content: "spend" }] });
    // A budget binds before routing: an unknown model on a spent key is refused for the budget.
    const both = await capped.post("/v1/routing/preview", { model: "nobody/nothing" });
    expect(both.json.data.refusal).toMatchObject({ code: "budget_exceeded", scope: "key" });
    expect(both.json.data.would_dispatch).toBe(false);
  });

  it("refuses bad input naming the field, a management key, and no key", async () => {
    const bad = await inference.post("/v1/routing/preview", { model: MODEL, temperature: 0.5 });
    expect(bad.status).toBe(400);
    expect(bad.json.error.details.field).toBe("temperature");
    const badSeed = await inference.post("/v1/routing/preview", { model: MODEL, routing_stability: "forever" });
    expect(badSeed.status).toBe(400);
    expect((await mgmt.post("/v1/routing/preview", { model: MODEL })).status).toBe(403);
    const none = await fetch(`${stack.gatewayUrl}/v1/routing/preview`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    expect(none.status).toBe(401);
  });
});
