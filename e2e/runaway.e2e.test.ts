import { gatewayClient, startFakeOpenAi, startStack, waitFor, type FakeUpstream, type Stack } from "@router/testkit";

/**
 * A runaway key, end to end over the separate-process stack on the Redis Streams bus: completions
 * through the gateway reach the runaway service as events, its sweep flags the key, the flag event
 * reaches the gateway, which pauses the key, and both gateway replicas refuse it.
 *
 * The sweep runs every half second here and the rate floor is 20 requests instead of 300
 * (RUNAWAY_SWEEP_INTERVAL_MS, RUNAWAY_MIN_REQUESTS: settings for tests; production keeps the product's
 * five minutes and 300). A new key's usual is zero, so 20 requests in 15 minutes break the rule.
 */

const MODEL = "openai/gpt-4o-mini";
const chat = (text = "Hello") => ({ model: MODEL, messages: [{ role: "user", content: text }] });
const FLOOR = 20;

describe("a runaway key through the separate-process stack", () => {
  let stack: Stack;
  let openai: FakeUpstream;
  let mgmt: ReturnType<typeof gatewayClient>;
  let replicaUrl: string;

  beforeAll(async () => {
    openai = await startFakeOpenAi();
    stack = await startStack({
      providerBaseUrls: { openai: openai.url },
      extraEnv: { RUNAWAY_SWEEP_INTERVAL_MS: "500", RUNAWAY_MIN_REQUESTS: String(FLOOR) },
    });
    const org = await stack.createOrg("Runaway Co");
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    expect((await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: "sk-runaway-0001" })).status).toBe(201);
    replicaUrl = await stack.startGatewayReplica();
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await openai?.close();
  });

  it("with runaway_action pause, flags a burst, pauses the key on both replicas within seconds, and resumes it", async () => {
    const settings = await mgmt.put("/v1/alerts/settings", { runaway_action: "pause" });
    expect(settings.status).toBe(200);
    expect((await mgmt.get("/v1/alerts/settings")).json.data).toEqual({ runaway_action: "pause" });
    const created = await mgmt.post("/v1/keys", { name: "looping agent" });
    expect(created.status).toBe(201);
    const { key, hash } = created.json.data as { key: string; hash: string };
    const replicas = [gatewayClient(stack.gatewayUrl, key), gatewayClient(replicaUrl, key)];
    // Each replica has served (and cached) the key before the flag.
    for (const r of replicas) expect((await r.post("/v1/chat/completions", chat())).status).toBe(200);

    for (let i = 0; i < FLOOR; i++) {
      const res = await replicas[i % 2]!.post("/v1/chat/completions", chat(`again ${i}`));
      expect(res.status).toBe(200);
    }

    const flag = await waitFor(
      async () => {
        const res = await mgmt.get("/v1/alerts/runaway");
        return (res.json.data as Array<Record<string, unknown>> | undefined)?.find((f) => f.key_hash === hash && f.key_paused === true);
      },
      { timeoutMs: 30_000, intervalMs: 200, what: "the flag with key_paused true" },
    );
    const flaggedAt = Date.now();
    expect(flag).toMatchObject({
      id: expect.stringMatching(/^flag_/),
      subject_kind: "key",
      subject: hash.slice(0, 12),
      key_name: "looping agent",
      key_hash: hash,
      key_paused: true,
      action: "paused",
      kind: "rate",
      usual_requests: 0,
    });
    expect(flag.requests).toBeGreaterThanOrEqual(FLOOR);

    const refusals = await waitFor(
      async () => {
        const answers = await Promise.all(replicas.map((r) => r.post("/v1/chat/completions", chat("once more"))));
        return answers.every((a) => a.status === 403 && a.json.error?.code === "key_paused") && answers;
      },
      { timeoutMs: 5_000, intervalMs: 100, what: "both replicas to refuse the paused key" },
    );
    expect(Date.now() - flaggedAt).toBeLessThan(5_000);
    expect(refusals.map((a) => a.json.error.details)).toEqual([{ paused_reason: "runaway" }, { paused_reason: "runaway" }]);

    const resumed = await mgmt.patch(`/v1/keys/${hash}`, { paused: false });
    expect(resumed.status).toBe(200);
    expect(resumed.json.data).toMatchObject({ hash, paused: false, paused_reason: null });
    await waitFor(
      async () => (await Promise.all(replicas.map((r) => r.post("/v1/chat/completions", chat("resumed"))))).every((a) => a.status === 200),
      { timeoutMs: 5_000, intervalMs: 100, what: "both replicas to serve the resumed key" },
    );
    const listed = await mgmt.get("/v1/alerts/runaway");
    expect((listed.json.data as Array<Record<string, unknown>>).filter((f) => f.key_hash === hash)).toEqual([
      expect.objectContaining({ id: flag.id, key_paused: false, action: "paused" }),
    ]);
  }, 90_000);
});
