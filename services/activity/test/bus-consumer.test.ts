import type { IncomingEvent } from "@router/bus";
import { ManualClock } from "@router/money";
import type { events } from "@router/proto";
import { waitFor } from "@router/testkit";
import { REQUEST_COMPLETED_TOPIC } from "../src/app";
import { startActivityHarness, type ActivityHarness } from "./activity-harness";
import { completedEvent, encodeEvent, identityHeader } from "./request-events";

let activity: ActivityHarness;

function publish(e: events.RequestCompleted | Uint8Array, id?: string): Promise<void> {
  const payload = e instanceof Uint8Array ? e : encodeEvent(e);
  const key = e instanceof Uint8Array ? "org_bus" : e.orgId;
  return activity.bus.publish({ topic: REQUEST_COMPLETED_TOPIC, key, type: REQUEST_COMPLETED_TOPIC, payload, id });
}

async function activityIds(orgId: string): Promise<string[]> {
  const res = await fetch(`${activity.base}/v1/activity`, { headers: await identityHeader(orgId) });
  return ((await res.json()) as { data: { id: string }[] }).data.map((r) => r.id);
}

async function attemptCount(requestId: string): Promise<number> {
  const r = await activity.db.query<{ n: string }>("SELECT count(*)::text AS n FROM upstream_attempts WHERE request_id = $1", [requestId]);
  return Number(r.rows[0]?.n);
}

beforeAll(async () => {
  // Short retry delays so a poison message reaches the dead-letter topic within the test.
  activity = await startActivityHarness("activitybus", new ManualClock(), { retryDelayMs: 5 });
});

afterAll(async () => {
  await activity.close();
});

test("records a request published on the bus, and a second delivery of it changes nothing", async () => {
  const event = completedEvent({ orgId: "org_bus" });

  await publish(event, "evt-once");
  await waitFor(async () => (await activityIds("org_bus")).includes(event.requestId), { what: "the request row" });
  await publish(event, "evt-once");
  // Events with one key are delivered in order, so once this marker is stored the duplicate was handled.
  const marker = completedEvent({ orgId: "org_bus" });
  await publish(marker);
  await waitFor(async () => (await activityIds("org_bus")).includes(marker.requestId), { what: "the marker row" });

  expect((await activityIds("org_bus")).filter((id) => id === event.requestId)).toHaveLength(1);
  expect(await attemptCount(event.requestId)).toBe(1);
});

test("dead-letters a payload it cannot decode after the bus's retries", async () => {
  const deadLettered: IncomingEvent[] = [];
  const dlq = await activity.bus.subscribe({
    topic: `${REQUEST_COMPLETED_TOPIC}.dlq`,
    group: "activity-test-dlq",
    handler: async (e) => {
      deadLettered.push(e);
    },
  });

  await publish(new Uint8Array([0xff, 0xff, 0xff]), "evt-poison");

  const poisoned = await waitFor(() => deadLettered.find((e) => e.id === "evt-poison"), { what: "the dead letter" });
  await dlq.close();
  expect(poisoned.payload).toEqual(new Uint8Array([0xff, 0xff, 0xff]));
});
