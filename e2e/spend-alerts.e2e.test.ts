import { SIGNATURE_HEADER, verifySignature } from "@router/outbound";
import { gatewayClient, startFakeOpenAi, startHttpsReceiver, startStack, waitFor, type FakeUpstream, type HttpsReceiver, type Stack } from "@router/testkit";

/**
 * The whole chain of a usage alert over the separate-process stack on the Redis Streams bus: a
 * completion through the gateway is settled by the ledger, whose settlement crosses the key's 50%
 * threshold and publishes `router.spend.threshold_crossed.v1`; the alerts service announces it to a
 * webhook channel at a real HTTPS receiver, signed with the channel's secret.
 */
describe("a completion leads to a signed usage alert", () => {
  let receiver: HttpsReceiver;
  let openai: FakeUpstream;
  let stack: Stack;

  beforeAll(async () => {
    receiver = await startHttpsReceiver();
    openai = await startFakeOpenAi();
    stack = await startStack({
      providerBaseUrls: { openai: openai.url },
      extraEnv: { ROUTER_OUTBOUND_ALLOW_HOSTS: "127.0.0.1", ROUTER_OUTBOUND_CA_FILE: receiver.caFile },
    });
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await openai?.close();
    await receiver?.close();
  });

  it("announces the highest threshold crossed, once, with a valid signature", async () => {
    const org = await stack.createOrg("Alerted");
    const mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    expect((await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: "sk-openai-alerted-0001" })).status).toBe(201);
    const channel = await mgmt.post("/v1/alerts/channels", { kind: "webhook", target: `${receiver.url}/usage`, thresholds: [25, 50, 90] });
    expect(channel.status).toBe(201);
    const secret = channel.json.data.signing_secret as string;
    const created = await mgmt.post("/v1/keys", { name: "metered", limit: 0.2, limit_reset: "daily", limit_mode: "soft", include_byok_in_limit: true });
    const key = gatewayClient(stack.gatewayUrl, created.json.data.key as string);

    // openai/gpt-4o-mini lists prompt tokens at $0.15 a million: this request costs $0.15, 75% of $0.20.
    openai.script({ text: "ok", usage: { prompt: 1_000_000, completion: 0 } });
    const res = await key.post("/v1/chat/completions", { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "spend" }] });
    expect(res.status).toBe(200);

    const delivered = await waitFor(() => receiver.requests.find((r) => r.path === "/usage"), { what: "the usage alert", timeoutMs: 30_000 });
    expect(verifySignature(delivered.headers[SIGNATURE_HEADER] as string, delivered.body, secret, { nowS: Date.now() / 1000 })).toBe(true);
    expect(JSON.parse(delivered.body)).toMatchObject({
      type: "key_limit.threshold",
      organization_id: org.orgId,
      data: { threshold: 50, key: { name: "metered", hash: created.json.data.hash } },
    });
    // 25 and 50 were both crossed by one request: one announcement, at the highest.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(receiver.requests.filter((r) => r.path === "/usage")).toHaveLength(1);
    const log = (await mgmt.get("/v1/alerts/deliveries")).json.data as Array<Record<string, unknown>>;
    expect(log.map((d) => [d.event, d.threshold, d.status])).toEqual([["key_limit.threshold", 50, "sent"]]);
  }, 60_000);
});
