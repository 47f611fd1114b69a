import { createBus, type EventBus, type IncomingEvent } from "@router/bus";
import { events, routing } from "@router/proto";
import { uniqueName, waitFor } from "@router/testkit";
import { requestsCompletedHandler } from "../src/health/health-consumer";
import { fixtureCatalog } from "./catalog-fixture";
import { silentLog, startHarness, type Harness } from "./routing-harness";

const TOPIC = "router.request.completed.v1";
const ALL = ["alpha", "beta", "gamma", "local"];
// The price sort keeps the expected orders deterministic; the draw has tests of its own.
const BY_PRICE = routing.ProviderPreferences.fromPartial({ sort: "price" });
const MINUTE = 60_000;

const route = (res: routing.PlanResponse) => res.cascade.map((c) => c.providerSlug);

type AttemptInput = Partial<events.UpstreamAttempt> & { endpointId: string };

interface BucketRow {
  endpoint_id: string;
  bucket_start: Date;
  attempts: number;
  failures: number;
  duration_sum_ms: bigint;
  duration_count: number;
  ttft_sum_ms: bigint;
  ttft_count: number;
}

describe("endpoint health learned from router.request.completed.v1", () => {
  let bus: EventBus;
  let h: Harness;

  beforeEach(async () => {
    // A namespace per test keeps the process-wide memory broker's topics apart.
    bus = await createBus({ kind: "memory", clientId: "routing-test", namespace: uniqueName("health"), log: silentLog, retryDelayMs: 5 });
    h = await startHarness({ catalog: fixtureCatalog(), bus, healthRefreshMs: 20, healthPruneEveryMs: 20 });
  });

  afterEach(async () => {
    await h.close();
    await bus.close();
  });

  /** A completed request whose attempts all started now (on the harness clock). */
  function completedPayload(eventId: string, attempts: AttemptInput[], extra: Partial<events.RequestCompleted> = {}): Uint8Array {
    const startedAtMs = BigInt(h.clock.now().getTime());
    return events.RequestCompleted.encode(
      events.RequestCompleted.fromPartial({
        requestId: eventId,
        orgId: "org_1",
        status: "complete",
        createdAtMs: startedAtMs,
        attempts: attempts.map((a, i) => ({ attempt: i + 1, status: "ok", startedAtMs, ...a })),
        ...extra,
      }),
    ).finish();
  }

  async function complete(eventId: string, attempts: AttemptInput[], extra: Partial<events.RequestCompleted> = {}): Promise<void> {
    // One key for every event: one partition, so events are handled in publish order.
    await bus.publish({ topic: TOPIC, key: "org_1", type: TOPIC, id: eventId, payload: completedPayload(eventId, attempts, extra) });
  }

  const failing = (endpointId: string): AttemptInput => ({ endpointId, status: "error", httpStatus: 503, errorCode: "http_503", durationMs: 40 });

  async function buckets(): Promise<BucketRow[]> {
    return (
      await h.db.query<BucketRow>(
        "SELECT endpoint_id, bucket_start, attempts, failures, duration_sum_ms, duration_count, ttft_sum_ms, ttft_count FROM endpoint_health_buckets ORDER BY endpoint_id, bucket_start",
      )
    ).rows;
  }

  async function processed(eventId: string): Promise<boolean> {
    const { rows } = await h.db.query("SELECT 1 FROM processed_events WHERE event_id = $1", [eventId]);
    return rows.length === 1;
  }

  it("counts a completed request's attempts into each endpoint's 5-minute bucket", async () => {
    h.clock.advance(2 * MINUTE + 17_000);
    await complete("gen-1", [
      { endpointId: "ep_gamma_one", status: "error", httpStatus: 502, errorCode: "http_502", durationMs: 120 },
      { endpointId: "ep_alpha_one", status: "ok", httpStatus: 200, durationMs: 900, ttftMs: 250 },
    ]);

    await waitFor(() => processed("gen-1"), { what: "the event to be recorded" });

    expect(await buckets()).toEqual([
      {
        endpoint_id: "ep_alpha_one",
        bucket_start: new Date("2025-11-01T12:00:00.000Z"),
        attempts: 1,
        failures: 0,
        duration_sum_ms: 900n,
        duration_count: 1,
        ttft_sum_ms: 250n,
        ttft_count: 1,
      },
      {
        endpoint_id: "ep_gamma_one",
        bucket_start: new Date("2025-11-01T12:00:00.000Z"),
        attempts: 1,
        failures: 1,
        duration_sum_ms: 120n,
        duration_count: 1,
        ttft_sum_ms: 0n,
        ttft_count: 0,
      },
    ]);
  });

  it("changes nothing when the same event is delivered twice", async () => {
    await complete("gen-1", [failing("ep_gamma_one"), { endpointId: "ep_alpha_one", ttftMs: 100, durationMs: 300 }]);
    await waitFor(() => processed("gen-1"), { what: "the first delivery" });
    const once = await buckets();

    await complete("gen-1", [failing("ep_gamma_one"), { endpointId: "ep_alpha_one", ttftMs: 100, durationMs: 300 }]);
    // Same key, so this one is handled after the repeat.
    await complete("gen-2", []);
    await waitFor(() => processed("gen-2"), { what: "the event after the repeat" });

    expect(await buckets()).toEqual(once);
  });

  it("counts a batch of events in one go, each event once, duplicates and earlier events included", async () => {
    const delivery = (eventId: string, attempts: AttemptInput[]): IncomingEvent => ({
      id: eventId,
      topic: TOPIC,
      key: "org_1",
      type: TOPIC,
      payload: completedPayload(eventId, attempts),
      headers: {},
      attempt: 1,
    });
    const handleBatch = requestsCompletedHandler({ db: h.db, log: silentLog, clock: h.clock });
    await handleBatch([delivery("gen-0", [failing("ep_gamma_one")])]);

    await handleBatch([
      delivery("gen-0", [failing("ep_gamma_one")]),
      delivery("gen-1", [failing("ep_gamma_one"), { endpointId: "ep_alpha_one", durationMs: 300 }]),
      delivery("gen-2", [{ endpointId: "ep_alpha_one", durationMs: 100 }]),
      delivery("gen-1", [failing("ep_gamma_one"), { endpointId: "ep_alpha_one", durationMs: 300 }]),
    ]);

    const rows = await buckets();
    expect(rows.map((r) => [r.endpoint_id, r.attempts, r.failures, r.duration_sum_ms])).toEqual([
      ["ep_alpha_one", 2, 0, 400n],
      ["ep_gamma_one", 2, 2, 80n],
    ]);
    expect(await Promise.all(["gen-0", "gen-1", "gen-2"].map(processed))).toEqual([true, true, true]);
  });

  it("leaves out attempts that say nothing about the endpoint", async () => {
    await complete("gen-1", [
      { endpointId: "ep_alpha_one", status: "error", httpStatus: 401, errorCode: "http_401" },
      { endpointId: "ep_beta_one", status: "error", httpStatus: 429, errorCode: "http_429" },
      { endpointId: "ep_gamma_one", status: "error", errorCode: "router.client_cancelled" },
    ]);
    await waitFor(() => processed("gen-1"), { what: "the event to be recorded" });

    expect(await buckets()).toEqual([]);
  });

  it("moves an endpoint failing at least half of 5 recent attempts after its model's healthy ones", async () => {
    expect(route(await h.plan({ model: "acme/one", byokProviders: ALL, provider: BY_PRICE }))).toEqual(["gamma", "alpha", "beta"]);

    for (let i = 1; i <= 5; i += 1) {
      await complete(`gen-${i}`, i <= 2 ? [{ endpointId: "ep_gamma_one", ttftMs: 90 }] : [failing("ep_gamma_one")]);
    }

    await waitFor(
      async () => route(await h.plan({ model: "acme/one", byokProviders: ALL, provider: BY_PRICE })).join() === "alpha,beta,gamma",
      { what: "gamma to be demoted" },
    );
  });

  it("restores a demoted endpoint once its failures are older than 15 minutes", async () => {
    for (let i = 1; i <= 5; i += 1) await complete(`gen-${i}`, [failing("ep_gamma_one")]);
    await waitFor(
      async () => route(await h.plan({ model: "acme/one", byokProviders: ALL, provider: BY_PRICE })).join() === "alpha,beta,gamma",
      { what: "gamma to be demoted" },
    );

    h.clock.advance(15 * MINUTE);

    await waitFor(
      async () => route(await h.plan({ model: "acme/one", byokProviders: ALL, provider: BY_PRICE })).join() === "gamma,alpha,beta",
      { what: "gamma to be restored" },
    );
  });

  it("keeps price order while an endpoint has fewer than 5 recent attempts", async () => {
    for (let i = 1; i <= 4; i += 1) await complete(`gen-${i}`, [failing("ep_gamma_one")]);
    await waitFor(async () => (await uptimeOf("ep_gamma_one")) === 0, { what: "the failures to reach the snapshot" });

    expect(route(await h.plan({ model: "acme/one", byokProviders: ALL, provider: BY_PRICE }))).toEqual(["gamma", "alpha", "beta"]);
  });

  it("reports uptime and mean time to first token over the last 24 hours on the endpoints route", async () => {
    type EndpointStats = { endpoint_id: string; uptime: number | null; latency_ms: number | null };
    const endpoints = async () => (await h.get("/v1/models/acme/one/endpoints")).body.data as EndpointStats[];
    const alpha = (rows: EndpointStats[]) => rows.find((e) => e.endpoint_id === "ep_alpha_one");

    await complete("gen-1", [failing("ep_alpha_one"), { endpointId: "ep_alpha_one", ttftMs: 100, durationMs: 800 }]);
    const first = await waitFor(async () => alpha(await endpoints())?.uptime != null && alpha(await endpoints()), {
      what: "the first event to reach the route",
    });
    expect([first.uptime, first.latency_ms]).toEqual([0.5, 100]);

    // The snapshot refreshes on a timer, so wait for it to move past the first event's figures.
    h.clock.advance(20 * 60 * MINUTE);
    await complete("gen-2", [{ endpointId: "ep_alpha_one", ttftMs: 301, durationMs: 700 }]);
    const data = await waitFor(
      async () => {
        const rows = await endpoints();
        return alpha(rows)?.latency_ms !== first.latency_ms && rows;
      },
      { what: "the second event to reach the route" },
    );

    expect(data.map((e) => [e.endpoint_id, e.uptime, e.latency_ms])).toEqual([
      ["ep_gamma_one", null, null],
      ["ep_alpha_one", 2 / 3, 201],
      ["ep_beta_one", null, null],
    ]);
    // No tool call measured yet: null, not a fabricated 1.
    expect(data[0]).toHaveProperty("tool_call_reliability", null);
  });

  it("reports tool-call reliability from the tool calls of the answers each endpoint served", async () => {
    type EndpointStats = { endpoint_id: string; tool_call_reliability: number | null };
    const reliability = async (id: string) =>
      ((await h.get("/v1/models/acme/one/endpoints")).body.data as EndpointStats[]).find((e) => e.endpoint_id === id)?.tool_call_reliability;

    // The failed attempt on beta served nothing: its endpoint is not credited with alpha's tool calls.
    await complete("gen-t1", [failing("ep_beta_one"), { endpointId: "ep_alpha_one", durationMs: 300 }], {
      endpointId: "ep_alpha_one",
      toolCalls: 3,
      invalidToolCalls: 1,
    });
    await complete("gen-t2", [{ endpointId: "ep_alpha_one", durationMs: 300 }], { endpointId: "ep_alpha_one", toolCalls: 1, invalidToolCalls: 0 });
    // A request without tool calls says nothing about them.
    await complete("gen-t3", [{ endpointId: "ep_alpha_one", durationMs: 300 }], { endpointId: "ep_alpha_one" });
    await waitFor(async () => (await reliability("ep_alpha_one")) === 0.75, { what: "3 of 4 tool calls usable" });
    expect(await reliability("ep_beta_one")).toBeNull();
    expect(await reliability("ep_gamma_one")).toBeNull();
  });

  it("drops buckets older than 24 hours from the stats and the table", async () => {
    await complete("gen-1", [failing("ep_alpha_one")]);
    await waitFor(async () => (await uptimeOf("ep_alpha_one")) === 0, { what: "the failure to reach the route" });

    h.clock.advance(24 * 60 * MINUTE);

    await waitFor(async () => (await buckets()).length === 0, { what: "the bucket to be pruned" });
    await waitFor(async () => (await uptimeOf("ep_alpha_one")) === null, { what: "the route to forget it" });
    expect(await processed("gen-1")).toBe(true);
  });

  it("sends an undecodable event to the dead-letter topic after retries", async () => {
    const dead: IncomingEvent[] = [];
    await bus.subscribe({ topic: `${TOPIC}.dlq`, group: "test", handler: async (e) => void dead.push(e) });

    await bus.publish({ topic: TOPIC, key: "org_1", type: TOPIC, id: "gen-bad", payload: new Uint8Array([0xff, 0xff, 0xff]) });

    await waitFor(() => dead.length === 1, { what: "the event in the dead-letter topic" });
    expect(dead[0]?.id).toBe("gen-bad");
    expect(await processed("gen-bad")).toBe(false);
  });

  async function uptimeOf(endpointId: string): Promise<number | null | undefined> {
    const { body } = await h.get("/v1/models/acme/one/endpoints");
    return (body.data as Array<{ endpoint_id: string; uptime: number | null }>).find((e) => e.endpoint_id === endpointId)?.uptime;
  }
});
