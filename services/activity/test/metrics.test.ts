import { ManualClock } from "@router/money";
import type { events } from "@router/proto";
import { waitFor, metricSample } from "@router/testkit";
import { REQUEST_COMPLETED_TOPIC } from "../src/app";
import { startActivityHarness, type ActivityHarness } from "./activity-harness";
import { completedEvent, encodeEvent } from "./request-events";

let activity: ActivityHarness;

beforeAll(async () => {
  activity = await startActivityHarness("activitymetrics", new ManualClock(), { retryDelayMs: 5 });
});

afterAll(() => activity.close());

/** The value of the first sample named `name` whose labels include `labels`; 0 when there is none. */
const scrape = async () => (await fetch(`${activity.base}/metrics`)).text();
const recorded = async (result: string) => metricSample(await scrape(), "activity_events_recorded_total", { result });

function publish(e: events.RequestCompleted | Uint8Array, id: string): Promise<void> {
  const payload = e instanceof Uint8Array ? e : encodeEvent(e);
  return activity.bus.publish({ topic: REQUEST_COMPLETED_TOPIC, key: "org_metrics", type: REQUEST_COMPLETED_TOPIC, payload, id });
}

test("serves its series on the internal port without the signed identity", async () => {
  const res = await fetch(`${activity.base}/metrics`);
  const text = await res.text();
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/plain");
  expect(text).toContain("# TYPE activity_events_recorded_total counter");
  expect(text).toContain('process_cpu_seconds_total{service="activity"}');
});

test("counts recorded events as new, duplicate or undecodable", async () => {
  const event = completedEvent({ orgId: "org_metrics" });
  await publish(event, "evt-metrics-1");
  await waitFor(async () => (await recorded("new")) === 1, { what: "one new event" });
  await publish(event, "evt-metrics-1");
  await waitFor(async () => (await recorded("duplicate")) === 1, { what: "one duplicate" });
  await publish(new Uint8Array([0xff, 0xff, 0xff]), "evt-metrics-bad");
  await waitFor(async () => (await recorded("undecodable")) >= 1, { what: "an undecodable delivery" });
  expect(await recorded("new")).toBe(1);
});
