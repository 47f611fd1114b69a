import { gatewayClient, startFakeOpenAi, startStack, waitFor, type FakeUpstream, type Stack } from "@router/testkit";

const MODEL = "meta-llama/llama-3.3-70b-instruct";
const METADATA = { "X-Router-Metadata": "enabled" };

type Client = ReturnType<typeof gatewayClient>;

/**
 * Sticky routing across two gateway replicas of the separate-process stack (Redis, the Redis
 * Streams bus): the organisation holds keys for the three hosts of one model, so its requests are
 * spread by routing's weighted draw; a conversation's requests stay on the endpoint that served it
 * first, whichever replica they reach, because routing pins what served (from the completed-request
 * event) in Redis and every replica asks the same routing.
 */
describe("sticky routing across gateway replicas", () => {
  let stack: Stack;
  let fakes: FakeUpstream[];
  let replicas: Client[];

  beforeAll(async () => {
    fakes = await Promise.all([startFakeOpenAi(), startFakeOpenAi(), startFakeOpenAi()]);
    const [groq, together, fireworks] = fakes;
    stack = await startStack({ providerBaseUrls: { groq: groq!.url, together: together!.url, fireworks: fireworks!.url } });
    const org = await stack.createOrg("Sticky Co");
    const mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    for (const [provider, key] of [
      ["groq", "gsk-sticky-0001"],
      ["together", "tg-sticky-0002"],
      ["fireworks", "fw-sticky-0003"],
    ]) {
      expect((await mgmt.post("/v1/provider-keys", { provider, api_key: key })).status).toBe(201);
    }
    const key = (await mgmt.post("/v1/keys", { name: "app" })).json.data.key as string;
    const second = await stack.startGatewayReplica();
    replicas = [gatewayClient(stack.gatewayUrl, key), gatewayClient(second, key)];
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all((fakes ?? []).map((f) => f.close()));
  });

  afterEach(() => {
    if (stack && process.env.E2E_LOGS) process.stderr.write(stack.logs());
  });

  const ask = async (replica: number, extra: Record<string, unknown>) => {
    const res = await replicas[replica]!.post(
      "/v1/chat/completions",
      { model: MODEL, messages: [{ role: "user", content: "Which host?" }], ...extra },
      METADATA,
    );
    expect(res.status).toBe(200);
    return res.json.router_metadata as Record<string, any>;
  };

  it("spreads requests without a sticky key over the hosts by the weighted draw, and replays a seed", async () => {
    const served = new Set<string>();
    for (let i = 0; i < 24; i += 1) {
      const meta = await ask(i % 2, {});
      expect(meta.ordering).toBe("sampled");
      served.add(meta.served.provider as string);
    }
    expect(served.size).toBeGreaterThan(1);

    const seeded = await ask(0, { routing_seed: "replay-42" });
    const again = await ask(1, { routing_seed: "replay-42" });
    expect(again.routing_seed).toBe("replay-42");
    expect(again.attempts.map((a: any) => a.endpoint_id)).toEqual(seeded.attempts.map((a: any) => a.endpoint_id));
    expect(again.served.endpoint_id).toBe(seeded.served.endpoint_id);
  });

  it("keeps a conversation on the endpoint that served it, on both replicas", async () => {
    const conversation = { session_id: "conv-across-replicas" };
    // The same seed until the pin lands, so every request meanwhile is served (and pins) alike.
    const first = await ask(0, { ...conversation, routing_seed: "first-turn" });
    expect(first.sticky).toMatchObject({ mode: "sticky", source: "session_id", pins: [] });
    const endpoint = first.served.endpoint_id as string;

    await waitFor(
      async () => {
        const meta = await ask(1, { ...conversation, routing_seed: "first-turn" });
        return meta.sticky.pins.some((p: any) => p.endpoint_id === endpoint && p.hoisted === true);
      },
      { timeoutMs: 15_000, what: "the pin to reach routing" },
    );

    // Other seeds draw other orders; the pin still comes first, whichever replica answers.
    for (let i = 0; i < 10; i += 1) {
      const meta = await ask(i % 2, { ...conversation, routing_seed: `turn-${i}` });
      expect(meta.served.endpoint_id).toBe(endpoint);
      expect(meta.attempts).toHaveLength(1);
      expect(meta.sticky.pins).toEqual([{ model: MODEL, endpoint_id: endpoint, hoisted: true, not_hoisted_reason: null }]);
    }

    // X-Session-Id names the same conversation; adaptive ignores the pin.
    const header = await replicas[1]!.post(
      "/v1/chat/completions",
      { model: MODEL, messages: [{ role: "user", content: "Still there?" }], routing_seed: "turn-h" },
      { ...METADATA, "X-Session-Id": conversation.session_id },
    );
    expect(header.json.router_metadata.served.endpoint_id).toBe(endpoint);
    const adaptive = await ask(0, { ...conversation, routing_stability: "adaptive" });
    expect(adaptive.sticky).toMatchObject({ mode: "adaptive", pins: [] });
  });
});
