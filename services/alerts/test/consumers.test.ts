import type { IncomingEvent } from "@router/bus";
import { SIGNATURE_HEADER, verifySignature } from "@router/outbound";
import { events, TOPICS } from "@router/proto";
import { metricSample, waitFor } from "@router/testkit";
import { thresholdToAnnounce } from "../src/app";
import { orgId, startAlertsHarness, type AlertsHarness } from "./alerts-harness";

let h: AlertsHarness;

beforeAll(async () => {
  h = await startAlertsHarness("alertsconsumers");
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => {
  h.receiver.requests.length = 0;
  h.receiver.respondWith(() => ({ status: 200 }));
});

const deliveries = async (org: string) => (await h.call("GET", "/v1/alerts/deliveries", { orgId: org })).body.data as Record<string, any>[];
/** The webhook body the receiver got for a delivery record. */
const bodyOf = (deliveryId: string) => h.receiver.requests.map((r) => JSON.parse(r.body) as Record<string, any>).find((b) => b.id === deliveryId);

/** Events the consumers have handled so far (new and duplicate), by topic. */
async function handledCount(topic: string): Promise<number> {
  const text = await (await fetch(`${h.base}/metrics`)).text();
  return metricSample(text, "alerts_events_consumed_total", { topic, result: "new" }) + metricSample(text, "alerts_events_consumed_total", { topic, result: "duplicate" });
}

/** Publishes through `publish`, waits until the consumer handled that many more events, then until their deliveries are recorded. */
async function handled(topic: string, publish: () => Promise<number>): Promise<void> {
  const before = await handledCount(topic);
  const n = await publish();
  await waitFor(async () => (await handledCount(topic)) >= before + n, { what: `${n} events handled` });
  await h.alerts.idle();
}
const crossings = (publish: () => Promise<number>) => handled(TOPICS.thresholdCrossed, publish);
const flags = (publish: () => Promise<number>) => handled(TOPICS.runawayFlagged, publish);

describe("the threshold a channel announces", () => {
  it.each([
    [[50, 80, 100], 0, 85, 80],
    [[50, 80, 100], 0, 100, 100],
    [[50, 80, 100], 50, 79, null],
    [[50, 80, 100], 49, 50, 50],
    [[50, 80, 100], 80, 100, 100],
    [[90], 0, 85, null],
    [[10, 20], 5, 100, 20],
  ])("thresholds %j crossed from %d%% to %d%% announce %p", (thresholds, previous, percent, expected) => {
    expect(thresholdToAnnounce(thresholds, previous, percent)).toBe(expected);
  });
});

describe("threshold crossings from the bus", () => {
  it("announces the highest threshold each channel passed, signed, once per window", async () => {
    const org = orgId();
    const a = await h.addWebhook(org, { name: "a" });
    await h.addWebhook(org, { name: "b", thresholds: [90] });
    let crossing = events.ThresholdCrossed.fromPartial({});
    await crossings(async () => {
      crossing = await h.publishCrossing({ orgId: org, previousPercent: 0, percent: 85 }, "evt-cross-1");
      return 1;
    });

    const rows = await deliveries(org);
    expect(rows).toHaveLength(1);
    const row = rows[0];
    expect(row).toMatchObject({
      channel_id: a.id,
      channel_name: "a",
      event: "key_limit.threshold",
      threshold: 80,
      status: "sent",
      key_name: "prod key",
      key_hash_prefix: "c".repeat(12),
      agent_tag: null,
    });
    const got = h.receiver.requests.find((r) => (JSON.parse(r.body) as { id: string }).id === row!.id)!;
    expect(verifySignature(got.headers[SIGNATURE_HEADER] as string, got.body, a.secret, { nowS: Date.parse("2026-11-21T10:00:00.000Z") / 1000 })).toBe(true);
    expect(JSON.parse(got.body)).toEqual({
      id: row!.id,
      type: "key_limit.threshold",
      created_at: "2026-11-21T10:00:00.000Z",
      organization_id: org,
      data: {
        threshold: 80,
        percent: 85,
        subject_kind: "key",
        key: { name: "prod key", hash: "c".repeat(64) },
        window: "monthly",
        window_start: "2026-11-01T00:00:00.000Z",
        mode: "hard",
        limit_usd: 10,
        usage_usd: 8.5,
        request_id: "gen-abc",
        crossed_at: "2026-11-21T09:59:00.000Z",
      },
    });

    // The same event again, and the same crossing under a new event id: nothing more.
    // A later crossing of the same window passes 100 on channel a and 90 on channel b.
    await crossings(async () => {
      await h.publishCrossing(crossing, "evt-cross-1");
      await h.publishCrossing(crossing, "evt-cross-1-copy");
      await h.publishCrossing({ ...crossing, crossingId: `${crossing.crossingId}-later`, previousPercent: 85, percent: 100 });
      return 3;
    });
    expect((await deliveries(org)).map((r) => [r.channel_name, r.threshold]).sort()).toEqual([
      ["a", 100],
      ["a", 80],
      ["b", 90],
    ]);
  });

  it("announces a threshold again in the next window, and never twice in one window", async () => {
    const org = orgId();
    await h.addWebhook(org, { thresholds: [50] });
    const november = BigInt(Date.parse("2026-11-01T00:00:00.000Z"));
    const december = BigInt(Date.parse("2026-12-01T00:00:00.000Z"));
    await crossings(async () => {
      await h.publishCrossing({ orgId: org, windowStartMs: november, previousPercent: 0, percent: 60 });
      // A second crossing id for the same window and threshold (e.g. a ledger replay) announces nothing.
      await h.publishCrossing({ orgId: org, windowStartMs: november, previousPercent: 0, percent: 55 });
      await h.publishCrossing({ orgId: org, windowStartMs: december, previousPercent: 0, percent: 51 });
      // Another subject has its own state.
      await h.publishCrossing({ orgId: org, subject: "e".repeat(64), windowStartMs: november, previousPercent: 0, percent: 50 });
      return 4;
    });
    const rows = await deliveries(org);
    expect(rows.map((r) => [r.key_hash_prefix, r.threshold]).sort()).toEqual([
      ["c".repeat(12), 50],
      ["c".repeat(12), 50],
      ["e".repeat(12), 50],
    ]);
  });

  it("announces an agent budget as agent_limit.threshold with the agent's name", async () => {
    const org = orgId();
    await h.addWebhook(org);
    await crossings(async () => {
      await h.publishCrossing({ orgId: org, subjectKind: "agent", subject: "planner", keyName: "", workspaceId: "ws_1", window: "daily", previousPercent: 40, percent: 50, mode: "soft" });
      return 1;
    });
    const [row] = await deliveries(org);
    expect(row).toMatchObject({ event: "agent_limit.threshold", threshold: 50, agent_tag: "planner", key_name: null, key_hash_prefix: null });
    expect(bodyOf(row!.id)?.data).toMatchObject({ subject_kind: "agent", agent: { name: "planner", workspace_id: "ws_1" }, mode: "soft", window: "daily" });
  });

  it("records a receiver answering 500 as failed after the retries, without holding up the consumer", async () => {
    const org = orgId();
    await h.addWebhook(org);
    h.receiver.respondWith(() => ({ status: 500 }));
    await crossings(async () => {
      await h.publishCrossing({ orgId: org, previousPercent: 0, percent: 100 });
      return 1;
    });
    const [row] = await deliveries(org);
    expect(row).toMatchObject({ status: "failed", http_status: 500, attempts: 3, threshold: 100, error: "the receiver answered HTTP 500 (after 3 attempts)" });
  });

  it("dead-letters a payload it cannot use after the bus's retries", async () => {
    const deadLettered: IncomingEvent[] = [];
    const dlq = await h.bus.subscribe({
      topic: `${TOPICS.thresholdCrossed}.dlq`,
      group: "alerts-test-dlq",
      handler: async (e) => {
        deadLettered.push(e);
      },
    });
    await h.bus.publish({ topic: TOPICS.thresholdCrossed, key: "org_x", type: TOPICS.thresholdCrossed, payload: Uint8Array.from([0xff, 0xff, 0xff]), id: "evt-garbage" });
    await h.publishCrossing({ orgId: "org_x", percent: 120 }, "evt-out-of-range");
    await waitFor(() => deadLettered.length >= 2, { what: "both events dead-lettered" });
    expect(deadLettered.map((e) => e.id).sort()).toEqual(["evt-garbage", "evt-out-of-range"]);
    await dlq.close();
  });
});

describe("runaway flags from the bus", () => {
  it("announces spend.runaway to every channel once per flag", async () => {
    const org = orgId();
    await h.addWebhook(org, { name: "one", thresholds: [100] });
    await h.addWebhook(org, { name: "two", thresholds: [50] });
    let flag = events.RunawayFlagged.fromPartial({});
    await flags(async () => {
      flag = await h.publishFlag({ orgId: org, action: "paused" }, "evt-flag-1");
      await h.publishFlag(flag, "evt-flag-1");
      await h.publishFlag(flag, "evt-flag-1-copy");
      return 3;
    });

    const rows = await deliveries(org);
    expect(rows).toHaveLength(2);
    expect(rows.map((r) => r.channel_name).sort()).toEqual(["one", "two"]);
    for (const r of rows) {
      expect(r).toMatchObject({ event: "spend.runaway", threshold: null, status: "sent", key_name: "batch key", key_hash_prefix: "d".repeat(12) });
    }
    expect(bodyOf(rows[0]!.id)).toMatchObject({
      type: "spend.runaway",
      organization_id: org,
      data: {
        flag_id: flag.flagId,
        subject_kind: "key",
        key: { name: "batch key", hash: "d".repeat(64) },
        kind: "spend",
        action: "paused",
        spend_usd: 12,
        usual_spend_usd: 3,
        requests: 40,
        usual_requests: 10.5,
        window_start: "2026-11-21T09:45:00.000Z",
        window_end: "2026-11-21T10:00:00.000Z",
      },
    });
  });

  it("announces an agent's flag with its agent tag", async () => {
    const org = orgId();
    await h.addWebhook(org);
    await flags(async () => {
      await h.publishFlag({ orgId: org, subjectKind: "agent", subject: "crawler", keyHash: "", keyName: "", kind: "rate" });
      return 1;
    });
    const [row] = await deliveries(org);
    expect(row).toMatchObject({ event: "spend.runaway", agent_tag: "crawler", key_name: null, key_hash_prefix: null });
  });
});

describe("metrics", () => {
  it("counts deliveries by event and status, and consumed events by result", async () => {
    const text = await (await fetch(`${h.base}/metrics`)).text();
    expect(text).toMatch(/alerts_deliveries_total\{event="spend\.runaway",status="sent",service="alerts"\} [1-9]/);
    expect(text).toMatch(/alerts_events_consumed_total\{topic="router\.spend\.runaway_flagged\.v1",result="duplicate",service="alerts"\} [1-9]/);
    expect(text).toMatch(/alerts_events_consumed_total\{topic="router\.spend\.threshold_crossed\.v1",result="undecodable",service="alerts"\} [1-9]/);
  });
});
