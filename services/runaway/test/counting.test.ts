import { ManualClock } from "@router/money";
import { TOPICS } from "@router/proto";
import { waitFor, metricSample } from "@router/testkit";
import { startRunawayHarness, type RunawayHarness } from "./runaway-harness";
import { completion, keyHash, publishCompletions } from "./runaway-events";

/**
 * The consumer: completed requests from the real bus (protobuf payloads) into per-subject buckets,
 * each request counted once however often it is delivered.
 */

const clock = new ManualClock(new Date("2026-11-21T10:00:00.000Z"));
let h: RunawayHarness;

beforeAll(async () => {
  h = await startRunawayHarness("runawaycount", clock);
});

afterAll(() => h.close());

interface BucketRow {
  subject_kind: string;
  subject: string;
  bucket_start: Date;
  spend: string;
  requests: string;
  key_name: string | null;
}

async function buckets(orgId: string): Promise<BucketRow[]> {
  const r = await h.db.query<BucketRow>(
    `SELECT subject_kind, subject, bucket_start, spend_nanodollars::text AS spend, requests::text AS requests, key_name
     FROM buckets WHERE org_id = $1 ORDER BY subject_kind, subject, bucket_start`,
    [orgId],
  );
  return r.rows;
}

/** Events of one organisation arrive in order: once this marker is counted, everything before it was handled. */
async function drain(orgId: string): Promise<void> {
  const marker = completion(clock.now(), { orgId, keyHash: "f".repeat(64), usd: 0 });
  await publishCompletions(h.bus, [marker]);
  await waitFor(
    async () => (await h.db.query("SELECT 1 FROM counted_requests WHERE request_id = $1", [marker.requestId])).rowCount === 1,
    { what: "the marker" },
  );
}

const scrape = async () => (await fetch(`${h.base}/metrics`)).text();

test("counts a key's and an agent's spend and requests in 5-minute buckets by the request's own time", async () => {
  const key = keyHash();
  const at = (iso: string) => new Date(iso);
  await publishCompletions(h.bus, [
    completion(at("2026-11-21T09:51:00.000Z"), { orgId: "org_count", keyHash: key, usd: 1.5, agent: "planner", keyName: "nightly" }),
    completion(at("2026-11-21T09:54:59.999Z"), { orgId: "org_count", keyHash: key, usd: 0.25, keyName: "nightly" }),
    completion(at("2026-11-21T09:55:00.000Z"), { orgId: "org_count", keyHash: key, usd: 2, agent: "planner", keyName: "nightly" }),
  ]);
  await drain("org_count");

  const rows = (await buckets("org_count")).filter((b) => b.subject !== "f".repeat(64));
  expect(rows.map((b) => [b.subject_kind, b.subject, b.bucket_start.toISOString(), b.spend, b.requests, b.key_name])).toEqual([
    ["agent", "planner", "2026-11-21T09:50:00.000Z", "1500000000", "1", null],
    ["agent", "planner", "2026-11-21T09:55:00.000Z", "2000000000", "1", null],
    ["key", key, "2026-11-21T09:50:00.000Z", "1750000000", "2", "nightly"],
    ["key", key, "2026-11-21T09:55:00.000Z", "2000000000", "1", "nightly"],
  ]);
});

test("counts a request once, whether it comes again under the same event id or a new one", async () => {
  const key = keyHash();
  const request = completion(clock.now(), { orgId: "org_replay", keyHash: key, usd: 3, agent: "loop" });
  await publishCompletions(h.bus, [request]);
  await drain("org_replay");
  const before = await buckets("org_replay");

  await publishCompletions(h.bus, [request]);
  await publishCompletions(h.bus, [request], "evt-republished-under-another-id");
  await drain("org_replay");

  const after = await buckets("org_replay");
  expect(after.filter((b) => b.subject === key || b.subject === "loop")).toEqual(before.filter((b) => b.subject === key || b.subject === "loop"));
  expect(after.find((b) => b.subject === key)?.spend).toBe("3000000000");
  expect(metricSample(await scrape(), "runaway_events_consumed_total", { result: "duplicate" })).toBeGreaterThanOrEqual(2);
});

test("leaves out a request older than the buckets are kept", async () => {
  const key = keyHash();
  const old = completion(new Date(clock.now().getTime() - 26 * 60 * 60_000), { orgId: "org_stale", keyHash: key, usd: 50 });
  await publishCompletions(h.bus, [old]);
  await drain("org_stale");

  expect((await buckets("org_stale")).some((b) => b.subject === key)).toBe(false);
  const remembered = await h.db.query("SELECT 1 FROM counted_requests WHERE request_id = $1", [old.requestId]);
  expect(remembered.rowCount).toBe(0);
  expect(metricSample(await scrape(), "runaway_events_consumed_total", { result: "stale" })).toBeGreaterThanOrEqual(1);
});

test("dead-letters a payload it cannot decode after the bus's retries", async () => {
  const deadLettered: string[] = [];
  const dlq = await h.bus.subscribe({
    topic: `${TOPICS.requestCompleted}.dlq`,
    group: "runaway-test-dlq",
    handler: async (e) => {
      deadLettered.push(e.id);
    },
  });
  await h.bus.publish({
    topic: TOPICS.requestCompleted,
    key: "org_poison",
    type: TOPICS.requestCompleted,
    id: "evt-poison",
    payload: new Uint8Array([0xff, 0xff, 0xff]),
  });
  await waitFor(() => deadLettered.includes("evt-poison"), { what: "the dead letter" });
  await dlq.close();
  expect(metricSample(await scrape(), "runaway_events_consumed_total", { result: "undecodable" })).toBeGreaterThanOrEqual(1);
});
