import Redis from "ioredis";
import { createBus, type EventBus, type IncomingEvent } from "@router/bus";
import { ManualClock } from "@router/money";
import { events, routing, TOPICS } from "@router/proto";
import { TEST_REDIS_URL, uniqueName, waitFor } from "@router/testkit";
import { PIN_BATCH_WAIT_MS, requestsCompletedHandler, StickyTraffic } from "../src/health/health-consumer";
import { MemoryPinStore, RedisPinStore, type PinStore } from "../src/sticky/pin-store";
import { stickyKeyOf } from "../src/sticky/sticky-key";
import { fixtureCatalog } from "./catalog-fixture";
import { silentLog, startHarness, type Harness } from "./routing-harness";

const ALL = ["alpha", "beta", "gamma", "local"];
const BY_PRICE = routing.ProviderPreferences.fromPartial({ sort: "price" });
const ORG = "org_sticky";

describe("sticky pins written from completed requests", () => {
  let bus: EventBus;
  let h: Harness;

  beforeEach(async () => {
    bus = await createBus({ kind: "memory", clientId: "routing-test", namespace: uniqueName("sticky"), log: silentLog, retryDelayMs: 5 });
    h = await startHarness({ catalog: fixtureCatalog(), bus });
  });
  afterEach(async () => {
    await h.close();
    await bus.close();
  });

  const planFor = (over: Partial<routing.PlanRequest> = {}) =>
    h.plan({ orgId: ORG, model: "acme/one", byokProviders: ALL, provider: BY_PRICE, sessionId: "conv-1", ...over });

  /** Publishes what the gateway publishes after serving a request Plan answered with `pinRef`. */
  async function served(id: string, pinRef: string, endpointId: string, createdAtMs: number, status = "complete"): Promise<void> {
    const payload = events.RequestCompleted.encode(
      events.RequestCompleted.fromPartial({
        requestId: id,
        orgId: ORG,
        status,
        createdAtMs: BigInt(createdAtMs),
        servedModel: endpointId ? "acme/one" : "",
        endpointId,
        stickyPin: pinRef,
        attempts: endpointId ? [{ attempt: 1, status: "ok", endpointId, startedAtMs: BigInt(createdAtMs) }] : [],
      }),
    ).finish();
    await bus.publish({ topic: TOPICS.requestCompleted, key: ORG, type: TOPICS.requestCompleted, id, payload });
  }
  const first = async (over: Partial<routing.PlanRequest> = {}) => (await planFor(over)).cascade[0]?.endpointId;

  it("pins the endpoint that served a sticky request, and hoists it for the next request of the conversation", async () => {
    const before = await planFor();
    expect(before.cascade[0]?.endpointId).toBe("ep_gamma_one");
    expect(before.sticky).toMatchObject({ mode: "sticky", source: "session_id", pins: [] });

    await served("gen-1", before.sticky?.pinRef ?? "", "ep_beta_one", 1_000);

    await waitFor(async () => (await first()) === "ep_beta_one", { what: "the pin to be hoisted" });
    const after = await planFor();
    expect(after.sticky?.pins).toEqual([{ modelId: "acme/one", endpointId: "ep_beta_one", hoisted: true, notHoistedReason: "" }]);
    // Another conversation of the organisation is not affected.
    expect(await first({ sessionId: "conv-2" })).toBe("ep_gamma_one");
    // The X-Session-Id header names the same conversation as the body's session_id.
    expect(await first({ sessionId: "", headerSessionId: "conv-1" })).toBe("ep_beta_one");
  });

  it("moves a sticky pin to the endpoint that served last, and never back for an older redelivered event", async () => {
    const ref = (await planFor()).sticky?.pinRef ?? "";
    await served("gen-1", ref, "ep_beta_one", 1_000);
    await served("gen-2", ref, "ep_alpha_one", 2_000);
    await waitFor(async () => (await first()) === "ep_alpha_one", { what: "the pin to move" });

    await served("gen-1-again", ref, "ep_beta_one", 1_000);
    await served("gen-3", "", "ep_gamma_one", 3_000);
    await waitFor(async () => (await h.db.query("SELECT 1 FROM processed_events WHERE event_id = 'gen-3'")).rows.length === 1, {
      what: "the later events to be consumed",
    });
    expect(await first()).toBe("ep_alpha_one");
  });

  it("keeps a pinned pin where it is once it exists", async () => {
    const ref = (await planFor({ routingStability: "pinned" })).sticky?.pinRef ?? "";
    expect(ref).toMatch(/^pinned:/);
    await served("gen-1", ref, "ep_beta_one", 1_000);
    await waitFor(async () => (await first({ routingStability: "pinned" })) === "ep_beta_one", { what: "the pin" });

    await served("gen-2", ref, "ep_alpha_one", 2_000);
    await served("gen-3", "", "", 3_000, "error");
    await waitFor(async () => (await h.db.query("SELECT 1 FROM processed_events WHERE event_id = 'gen-3'")).rows.length === 1, {
      what: "the later events to be consumed",
    });
    expect(await first({ routingStability: "pinned" })).toBe("ep_beta_one");
  });

  it("pins nothing for an adaptive request, nor for one that was not served", async () => {
    const adaptive = await planFor({ routingStability: "adaptive" });
    expect(adaptive.sticky?.pinRef).toBe("");
    const ref = (await planFor()).sticky?.pinRef ?? "";
    await served("gen-1", ref, "", 1_000, "error");
    await served("gen-2", "", "ep_beta_one", 2_000);
    await waitFor(async () => (await h.db.query("SELECT 1 FROM processed_events WHERE event_id = 'gen-2'")).rows.length === 1, {
      what: "the events to be consumed",
    });
    expect((await planFor()).sticky?.pins).toEqual([]);
  });
});

describe("a pin that cannot be written", () => {
  it("is logged, and the event's health counts are still recorded (nothing goes to the dead-letter topic)", async () => {
    const h = await startHarness({ catalog: fixtureCatalog() });
    try {
      const failing: PinStore = { read: () => Promise.resolve(new Map()), record: () => Promise.reject(new Error("redis away")), close: () => undefined };
      const handle = requestsCompletedHandler({ db: h.db, log: silentLog, clock: h.clock, pins: failing });
      const ref = (await h.plan({ orgId: ORG, model: "acme/one", byokProviders: ALL, sessionId: "c" })).sticky?.pinRef ?? "";
      const payload = events.RequestCompleted.encode(
        events.RequestCompleted.fromPartial({
          requestId: "gen-p",
          orgId: ORG,
          status: "complete",
          createdAtMs: BigInt(h.clock.now().getTime()),
          servedModel: "acme/one",
          endpointId: "ep_beta_one",
          stickyPin: ref,
          attempts: [{ attempt: 1, status: "ok", endpointId: "ep_beta_one", startedAtMs: BigInt(h.clock.now().getTime()) }],
        }),
      ).finish();
      const delivery: IncomingEvent = { id: "gen-p", topic: TOPICS.requestCompleted, key: ORG, type: TOPICS.requestCompleted, payload, headers: {}, attempt: 1 };

      await expect(handle([delivery])).resolves.toBeUndefined();
      const { rows } = await h.db.query("SELECT attempts FROM endpoint_health_buckets WHERE endpoint_id = 'ep_beta_one'");
      expect(rows).toEqual([{ attempts: 1 }]);
    } finally {
      await h.close();
    }
  });
});

describe("how long the health consumer gathers", () => {
  it("gathers briefly while sticky requests flow, and for the bus's default a minute after the last", async () => {
    const h = await startHarness({ catalog: fixtureCatalog() });
    try {
      const clock = new ManualClock();
      const traffic = new StickyTraffic(clock);
      const handle = requestsCompletedHandler({ db: h.db, log: silentLog, clock: h.clock, pins: new MemoryPinStore(clock, { idleTtlMs: 60_000 }), stickyTraffic: traffic });
      const delivery = (id: string, stickyPin: string): IncomingEvent => ({
        id,
        topic: TOPICS.requestCompleted,
        key: ORG,
        type: TOPICS.requestCompleted,
        headers: {},
        attempt: 1,
        payload: events.RequestCompleted.encode(
          events.RequestCompleted.fromPartial({
            requestId: id,
            orgId: ORG,
            status: "complete",
            createdAtMs: BigInt(h.clock.now().getTime()),
            servedModel: "acme/one",
            endpointId: "ep_beta_one",
            stickyPin,
            attempts: [{ attempt: 1, status: "ok", endpointId: "ep_beta_one", startedAtMs: BigInt(h.clock.now().getTime()) }],
          }),
        ).finish(),
      });
      // No sticky request yet: the bus's default.
      await handle([delivery("gen-plain", "")]);
      expect(traffic.batchWaitMs()).toBeUndefined();

      const ref = (await h.plan({ orgId: ORG, model: "acme/one", byokProviders: ALL, sessionId: "c" })).sticky?.pinRef ?? "";
      await handle([delivery("gen-sticky", ref)]);
      expect(traffic.batchWaitMs()).toBe(PIN_BATCH_WAIT_MS);
      clock.advance(59_000);
      expect(traffic.batchWaitMs()).toBe(PIN_BATCH_WAIT_MS);
      clock.advance(1_001);
      expect(traffic.batchWaitMs()).toBeUndefined();
    } finally {
      await h.close();
    }
  });
});

describe("pin stores", () => {
  const hashOf = (session: string) => stickyKeyOf(routing.PlanRequest.fromPartial({ sessionId: session }))?.hash ?? "";
  const write = (store: PinStore, endpointId: string, atMs: number, mode: "sticky" | "pinned" = "sticky") =>
    store.record({ orgId: "org_p", hash: hashOf("s"), mode, modelId: "acme/one", endpointId, atMs });

  it("forgets a key's pins after the idle TTL in memory, and a read restarts the idle time", async () => {
    const clock = new ManualClock();
    const store = new MemoryPinStore(clock, { idleTtlMs: 60_000 });
    await write(store, "ep_a", 1);
    clock.advance(50_000);
    expect((await store.read("org_p", hashOf("s"))).get("acme/one")).toBe("ep_a");
    clock.advance(50_000);
    expect((await store.read("org_p", hashOf("s"))).get("acme/one")).toBe("ep_a");
    clock.advance(60_001);
    expect((await store.read("org_p", hashOf("s"))).size).toBe(0);
  });

  it("keeps at most maxKeys sessions in memory, forgetting the least recently used", async () => {
    const clock = new ManualClock();
    const store = new MemoryPinStore(clock, { idleTtlMs: 60_000, maxKeys: 2 });
    for (const session of ["s1", "s2", "s3"]) {
      await store.record({ orgId: "org_p", hash: hashOf(session), mode: "sticky", modelId: "acme/one", endpointId: `ep_${session}`, atMs: 1 });
    }
    expect((await store.read("org_p", hashOf("s1"))).size).toBe(0);
    expect((await store.read("org_p", hashOf("s2"))).get("acme/one")).toBe("ep_s2");
    expect((await store.read("org_p", hashOf("s3"))).get("acme/one")).toBe("ep_s3");
  });

  describe("in Redis, shared by every routing replica", () => {
    let a: Redis;
    let b: Redis;
    let prefix: string;
    beforeEach(() => {
      a = new Redis(TEST_REDIS_URL);
      b = new Redis(TEST_REDIS_URL);
      prefix = `${uniqueName("pins")}:`;
    });
    afterEach(() => {
      a.disconnect();
      b.disconnect();
    });

    it("lets one replica read what another wrote, with the same ordering rules", async () => {
      const writer = new RedisPinStore(a, { idleTtlMs: 60_000, keyPrefix: prefix });
      const reader = new RedisPinStore(b, { idleTtlMs: 60_000, keyPrefix: prefix });
      await write(writer, "ep_a", 2_000);
      await write(writer, "ep_old", 1_000);
      expect((await reader.read("org_p", hashOf("s"))).get("acme/one")).toBe("ep_a");
      await write(writer, "ep_pinned", 3_000, "pinned");
      expect((await reader.read("org_p", hashOf("s"))).get("acme/one")).toBe("ep_a");
      expect((await reader.read("org_other", hashOf("s"))).size).toBe(0);
    });

    it("expires a key left idle for the TTL; a read keeps it alive", async () => {
      // Reads every quarter of the TTL, for longer than the TTL: alive; then idle past it: gone. The
      // margins are wide because a busy machine stretches every sleep.
      const store = new RedisPinStore(a, { idleTtlMs: 2_000, keyPrefix: prefix });
      await write(store, "ep_a", 1);
      for (let i = 0; i < 5; i += 1) {
        await new Promise((r) => setTimeout(r, 500));
        expect((await store.read("org_p", hashOf("s"))).get("acme/one")).toBe("ep_a");
      }
      await new Promise((r) => setTimeout(r, 2_600));
      expect((await store.read("org_p", hashOf("s"))).size).toBe(0);
    });
  });
});
