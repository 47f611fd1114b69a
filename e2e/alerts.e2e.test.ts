import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBus, type EventBus } from "@router/bus";
import { createLogger } from "@router/logging";
import { SIGNATURE_HEADER, verifySignature } from "@router/outbound";
import { events, TOPICS } from "@router/proto";
import { gatewayClient, startHttpsReceiver, startStack, waitFor, type HttpsReceiver, type Stack } from "@router/testkit";

/**
 * Usage alerts across the separate-process stack on its bus (Redis Streams, or Kafka): a threshold crossing
 * published on the stack's bus reaches a webhook channel at a real HTTPS receiver on loopback
 * (allowed through the test-only outbound override), signed; a receiver answering 500 is retried
 * and the failure shows in the delivery log through the gateway; a private target is refused.
 */
describe("alerts through the separate-process stack", () => {
  let receiver: HttpsReceiver;
  let stack: Stack;
  let bus: EventBus;
  let outboxDir: string;
  let orgId: string;
  let mgmt: ReturnType<typeof gatewayClient>;

  beforeAll(async () => {
    receiver = await startHttpsReceiver();
    stack = await startStack({
      providerBaseUrls: {},
      extraEnv: {
        ROUTER_OUTBOUND_ALLOW_HOSTS: "127.0.0.1",
        ROUTER_OUTBOUND_CA_FILE: receiver.caFile,
        ROUTER_OUTBOUND_RETRY_DELAY_MS: "20",
      },
    });
    const org = await stack.createOrg("Alerts Co");
    orgId = org.orgId;
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    // The ledger's side of the topic: a publisher on the stack's own namespace.
    outboxDir = mkdtempSync(join(tmpdir(), "alerts-e2e-outbox-"));
    bus = await createBus({
      ...stack.bus,
      clientId: "alerts-e2e-ledger",
      outboxDir,
      log: createLogger({ level: "silent" }),
    });
  }, 60_000);

  afterAll(async () => {
    await bus?.close();
    await stack?.stop();
    await receiver?.close();
    if (outboxDir) rmSync(outboxDir, { recursive: true, force: true });
  });

  const publishCrossing = (overrides: Partial<events.ThresholdCrossed>) => {
    const crossing = events.ThresholdCrossed.fromPartial({
      orgId,
      subjectKind: "key",
      subject: "f".repeat(64),
      keyName: "prod",
      window: "daily",
      windowStartMs: BigInt(Date.UTC(2026, 10, 21)),
      mode: "hard",
      limitNanodollars: 5_000_000_000n,
      crossedAtMs: BigInt(Date.now()),
      ...overrides,
    });
    return bus.publish({ topic: TOPICS.thresholdCrossed, key: orgId, type: TOPICS.thresholdCrossed, payload: events.ThresholdCrossed.encode(crossing).finish() });
  };

  it("refuses a channel whose target is a private address when it is saved", async () => {
    for (const target of ["https://10.1.2.3/hook", "https://169.254.169.254/latest/meta-data", "https://localhost/hook"]) {
      const res = await mgmt.post("/v1/alerts/channels", { kind: "webhook", target });
      expect(res.status).toBe(400);
      expect(res.json.error.details.field).toBe("target");
    }
    expect((await mgmt.get("/v1/alerts/channels")).json.data).toEqual([]);
  });

  it("delivers a threshold crossing as a signed webhook, then retries a failing receiver and records it", async () => {
    const created = await mgmt.post("/v1/alerts/channels", { kind: "webhook", target: `${receiver.url}/alerts`, name: "ops" });
    expect(created.status).toBe(201);
    const { id, signing_secret: secret } = created.json.data as { id: string; signing_secret: string };
    expect((await mgmt.get("/v1/alerts/channels")).json.data.map((c: { id: string }) => c.id)).toEqual([id]);

    await publishCrossing({ crossingId: "cross-e2e-1", previousPercent: 0, percent: 83, usageNanodollars: 4_150_000_000n });
    await waitFor(() => receiver.requests.length >= 1, { what: "the webhook delivery", timeoutMs: 20_000 });
    const got = receiver.requests[0]!;
    expect(got.path).toBe("/alerts");
    expect(verifySignature(got.headers[SIGNATURE_HEADER] as string, got.body, secret, { nowS: Date.now() / 1000 })).toBe(true);
    expect(JSON.parse(got.body)).toMatchObject({
      type: "key_limit.threshold",
      organization_id: orgId,
      data: { threshold: 80, percent: 83, key: { name: "prod", hash: "f".repeat(64) }, window: "daily", limit_usd: 5, usage_usd: 4.15 },
    });

    receiver.respondWith(() => ({ status: 500 }));
    await publishCrossing({ crossingId: "cross-e2e-2", previousPercent: 83, percent: 100, usageNanodollars: 5_000_000_000n });
    const failed = await waitFor(
      async () => {
        const rows = (await mgmt.get("/v1/alerts/deliveries")).json.data as Record<string, unknown>[];
        return rows.find((r) => r.threshold === 100);
      },
      { what: "the failed delivery in the log", timeoutMs: 20_000 },
    );
    expect(failed).toMatchObject({ channel_id: id, event: "key_limit.threshold", status: "failed", http_status: 500, attempts: 4 });
    expect(receiver.requests).toHaveLength(5);

    const log = (await mgmt.get("/v1/alerts/deliveries")).json.data as Record<string, unknown>[];
    expect(log.map((r) => [r.threshold, r.status])).toEqual([
      [100, "failed"],
      [80, "sent"],
    ]);
  }, 60_000);

  it("sends a test alert through the gateway at once", async () => {
    receiver.respondWith(() => ({ status: 204 }));
    const [channel] = (await mgmt.get("/v1/alerts/channels")).json.data as { id: string }[];
    const res = await mgmt.post(`/v1/alerts/channels/${channel!.id}/test`, {});
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({ status: "sent", http_status: 204, error: null });
    expect(JSON.parse(receiver.requests.at(-1)!.body)).toMatchObject({ type: "test" });
  });
});
