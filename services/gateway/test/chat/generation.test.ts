import Redis from "ioredis";
import { TEST_REDIS_URL, waitFor } from "@router/testkit";
import { events } from "@router/proto";
import { createRecentGenerations, type RecentGenerations } from "../../src/generation/recent-generations";
import { silent, startChatHarness, userMessage, type ChatHarness } from "./chat-harness";

describe("GET /v1/generation right after a completion", () => {
  let h: ChatHarness;
  beforeAll(async () => {
    h = await startChatHarness();
  });
  afterAll(() => h.close());

  it("answers as soon as the response was sent, with the pricing detail and no content", async () => {
    h.fakes.openai.script({ text: "secret answer", usage: { prompt: 1000, completion: 100 } });
    const res = await h.post({ model: "test/gpt", messages: userMessage("secret question") }, { headers: { "HTTP-Referer": "https://app.example/x?y=1" } });
    const gen = await h.get(`/v1/generation?id=${res.body.id}`);

    expect(gen.status).toBe(200);
    expect(gen.body.data).toMatchObject({
      id: res.body.id,
      model: "test/gpt",
      provider_name: "openai",
      endpoint_id: "ep_openai_gpt",
      total_cost: 0,
      // The provider's charge at list price (1000 × $2/M + 100 × $8/M), apart from Router's fee.
      list_cost: 0.0028,
      fee: 0,
      finish_reason: "stop",
      native_finish_reason: "stop",
      streamed: false,
      cancelled: false,
      is_byok: true,
      tokens_prompt: 1000,
      tokens_completion: 100,
      http_referer: "https://app.example",
      usage_lines: [
        { kind: "prompt", tokens: 1000, price_per_million: 2, price_per_million_nanodollars: "2000000000", cost: 0.002, cost_nanodollars: "2000000" },
        { kind: "completion", tokens: 100, price_per_million: 8, cost: 0.0008, cost_nanodollars: "800000" },
      ],
    });
    expect(gen.body.data.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(JSON.stringify(gen.body)).not.toContain("secret");
  });

  it("answers right after a stream's [DONE]", async () => {
    const res = await h.stream({ model: "test/claude", messages: userMessage(), stream: true });
    const gen = await h.get(`/v1/generation?id=${res.chunks[0].id}`);
    expect(gen.status).toBe(200);
    expect(gen.body.data).toMatchObject({ streamed: true, provider_name: "anthropic" });
  });

  it("never serves another organisation's generation (the request falls through to activity)", async () => {
    const res = await h.post({ model: "test/gpt", messages: userMessage() });
    h.addKey("rt-v1-stranger", {}, "org_stranger");
    const gen = await h.get(`/v1/generation?id=${res.body.id}`, "rt-v1-stranger");
    expect(gen.status).toBe(404);
  });

  it("needs the id", async () => {
    const gen = await h.get("/v1/generation");
    expect(gen.status).toBe(400);
    expect(gen.body.error.details.field).toBe("id");
  });
});

describe("recent generations store", () => {
  /** A completion event as the bus carries it (what the store keeps). */
  const encoded = (orgId: string, id: string): Uint8Array =>
    events.RequestCompleted.encode(events.RequestCompleted.fromPartial({ requestId: id, orgId, servedModel: "m", providerSlug: "openai", providerName: "OpenAI" })).finish();
  const put = (store: RecentGenerations, orgId: string, id: string) => store.put(orgId, id, encoded(orgId, id));

  it("forgets a generation after its time to live", async () => {
    let now = 1_000;
    const store = createRecentGenerations({ log: silent, ttlMs: 60_000, now: () => now });
    put(store, "org_a", "gen-1");
    // Rendered from the event when asked.
    expect(await store.get("org_a", "gen-1")).toMatchObject({ id: "gen-1", model: "m", provider_name: "OpenAI" });
    now += 60_000;
    expect(await store.get("org_a", "gen-1")).toBeNull();
  });

  it("keeps its memory bounded", async () => {
    const store = createRecentGenerations({ log: silent, maxEntries: 2 });
    for (const id of ["gen-1", "gen-2", "gen-3"]) put(store, "org_a", id);
    expect(await store.get("org_a", "gen-1")).toBeNull();
    expect(await store.get("org_a", "gen-3")).not.toBeNull();
  });

  it("shares generations between gateway instances through Redis, scoped by organisation", async () => {
    const a = new Redis(TEST_REDIS_URL);
    const b = new Redis(TEST_REDIS_URL);
    try {
      const writer = createRecentGenerations({ log: silent, redis: a });
      const reader = createRecentGenerations({ log: silent, redis: b });
      const id = `gen-${Date.now()}-${Math.random().toString(16).slice(2)}`;
      put(writer, "org_a", id);
      await expect(waitFor(() => reader.get("org_a", id))).resolves.toMatchObject({ id });
      expect(await reader.get("org_b", id)).toBeNull();
      expect(await b.pttl(`router:generation:${id}`)).toBeGreaterThan(0);
    } finally {
      a.disconnect();
      b.disconnect();
    }
  });

  it("reads an entry a gateway from before the events were kept wrote as JSON", async () => {
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const id = `gen-${Date.now()}-${Math.random().toString(16).slice(2)}`;
      await redis.set(`router:generation:${id}`, JSON.stringify({ orgId: "org_a", record: { id, model: "old" } }), "PX", 60_000);
      const store = createRecentGenerations({ log: silent, redis });
      expect(await store.get("org_a", id)).toEqual({ id, model: "old" });
      expect(await store.get("org_b", id)).toBeNull();
    } finally {
      redis.disconnect();
    }
  });

  it("writes the Redis copies of generations that finished together in one pipeline", async () => {
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const pipelines = jest.spyOn(redis, "pipeline");
      const store = createRecentGenerations({ log: silent, redis, writeEveryMs: 50 });
      const ids = Array.from({ length: 5 }, (_, i) => `gen-${Date.now()}-${i}-${Math.random().toString(16).slice(2)}`);
      for (const id of ids) put(store, "org_a", id);
      await waitFor(async () => (await redis.exists(...ids.map((id) => `router:generation:${id}`))) === ids.length, { what: "the Redis copies" });
      expect(pipelines).toHaveBeenCalledTimes(1);
    } finally {
      redis.disconnect();
    }
  });

  it("with Redis, keeps a generation in memory only until Redis holds it", async () => {
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const store = createRecentGenerations({ log: silent, redis });
      const id = `gen-${Date.now()}-${Math.random().toString(16).slice(2)}`;
      put(store, "org_a", id);
      // Answered at once, before the write could have reached Redis.
      expect(await store.get("org_a", id)).toMatchObject({ id });

      await waitFor(async () => (await redis.exists(`router:generation:${id}`)) === 1, { what: "the Redis copy" });
      await redis.del(`router:generation:${id}`);

      // The memory copy went once Redis had it: with the Redis copy gone, nothing answers.
      expect(await store.get("org_a", id)).toBeNull();
    } finally {
      redis.disconnect();
    }
  });
});
