import { createBus, type EventBus } from "@router/bus";
import { events } from "@router/proto";
import { uniqueName, waitFor, metricSample } from "@router/testkit";
import { fixtureCatalog } from "./catalog-fixture";
import { silentLog, startHarness, type Harness } from "./routing-harness";

const TOPIC = "router.request.completed.v1";

/** The value of the first sample named `name` whose labels include `labels`; 0 when there is none. */
describe("routing metrics", () => {
  let bus: EventBus;
  let h: Harness;
  beforeAll(async () => {
    bus = await createBus({ kind: "memory", clientId: "routing-test", namespace: uniqueName("metrics"), log: silentLog, retryDelayMs: 5 });
    h = await startHarness({ catalog: fixtureCatalog(), bus });
  });
  afterAll(async () => {
    await h.close();
    await bus.close();
  });

  const scrape = async () => (await fetch(`${h.baseUrl}/metrics`)).text();

  it("serves its series in the Prometheus text format on the internal HTTP port", async () => {
    const res = await fetch(`${h.baseUrl}/metrics`);
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    expect(text).toContain("# TYPE routing_plan_duration_seconds histogram");
    expect(text).toContain("# TYPE routing_events_consumed_total counter");
    expect(text).toContain('process_cpu_seconds_total{service="routing"}');
  });

  it("times every Plan call", async () => {
    const before = metricSample(await scrape(), "routing_plan_duration_seconds_count");
    await h.plan({ model: "acme/one", byokProviders: ["alpha"] });
    await h.plan({ model: "nobody/nothing", byokProviders: ["alpha"] });
    expect(metricSample(await scrape(), "routing_plan_duration_seconds_count") - before).toBe(2);
  });

  it("counts consumed events as recorded, duplicate or undecodable", async () => {
    const payload = events.RequestCompleted.encode(
      events.RequestCompleted.fromPartial({ requestId: "gen-m1", orgId: "org_1", status: "complete", createdAtMs: 1n }),
    ).finish();
    await bus.publish({ topic: TOPIC, key: "org_1", type: TOPIC, id: "gen-m1", payload });
    await waitFor(async () => metricSample(await scrape(), "routing_events_consumed_total", { result: "recorded" }) === 1, { what: "one recorded" });
    await bus.publish({ topic: TOPIC, key: "org_1", type: TOPIC, id: "gen-m1", payload });
    await waitFor(async () => metricSample(await scrape(), "routing_events_consumed_total", { result: "duplicate" }) === 1, { what: "one duplicate" });
    await bus.publish({ topic: TOPIC, key: "org_1", type: TOPIC, id: "gen-bad", payload: new Uint8Array([0xff, 0xff, 0xff]) });
    await waitFor(async () => metricSample(await scrape(), "routing_events_consumed_total", { result: "undecodable" }) >= 1, { what: "undecodable" });
    expect(metricSample(await scrape(), "routing_events_consumed_total", { result: "recorded" })).toBe(1);
  });
});
