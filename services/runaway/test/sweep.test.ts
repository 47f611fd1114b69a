import { createBus, type EventBus } from "@router/bus";
import { createLogger } from "@router/logging";
import { ManualClock } from "@router/money";
import type { events } from "@router/proto";
import { TOPICS } from "@router/proto";
import { waitFor } from "@router/testkit";
import { startRunawayHarness, type RunawayHarness } from "./runaway-harness";
import { completion, keyHash, publishCompletions } from "./runaway-events";

/**
 * The sweep on an injected clock, over completions published on the real bus: the rule, the flag
 * and its event, the organisation's action, once an hour, replicas sweeping together, and a flag
 * whose event could not be sent at first.
 */

const MIN = 60_000;
const HOUR = 60 * MIN;
// A sweep on a 5-minute boundary: its window is 09:50 to 10:05.
const T = new Date("2026-11-21T10:05:00.000Z");
const clock = new ManualClock(T);
let h: RunawayHarness;

beforeAll(async () => {
  h = await startRunawayHarness("runawaysweep", clock);
});

afterAll(() => h.close());

beforeEach(() => clock.set(T));

const ago = (ms: number) => new Date(clock.now().getTime() - ms);

/** Publishes the completions and waits until every one of them is counted. */
async function publishAndCount(completions: events.RequestCompleted[], harness: RunawayHarness = h): Promise<void> {
  await publishCompletions(harness.bus, completions);
  const ids = completions.map((c) => c.requestId);
  await waitFor(
    async () => (await harness.db.query("SELECT 1 FROM counted_requests WHERE request_id = ANY($1)", [ids])).rowCount === ids.length,
    { what: "the completions to be counted" },
  );
}

/** `count` completions of `usd` each, spread over the last `spanMs` before the clock. */
function burst(orgId: string, key: string, count: number, usd: number, opts: { spanMs?: number; agent?: string } = {}) {
  const span = opts.spanMs ?? 10 * MIN;
  return Array.from({ length: count }, (_, i) =>
    completion(ago(span - (i * span) / count), { orgId, keyHash: key, usd, agent: opts.agent, keyName: "batch job" }),
  );
}

async function flagsOf(orgId: string, harness: RunawayHarness = h) {
  const res = await harness.get("/v1/alerts/runaway", orgId);
  expect(res.status).toBe(200);
  return res.body.data as Array<Record<string, unknown>>;
}

test("flags a key whose last 15 minutes cost 3 times its usual and at least 5 USD, and publishes the flag", async () => {
  const runaway = keyHash();
  const steady = keyHash();
  await publishAndCount([
    // Usual: 96 USD over the day before the window is 1 USD per 15 minutes.
    completion(ago(3 * HOUR), { orgId: "org_spend", keyHash: runaway, usd: 96 }),
    ...burst("org_spend", runaway, 3, 2),
    // A steady spender at 10 USD per 15 minutes spending 20 now: twice its usual, not flagged.
    completion(ago(5 * HOUR), { orgId: "org_spend", keyHash: steady, usd: 960 }),
    ...burst("org_spend", steady, 4, 5),
  ]);

  const report = await h.runaway.sweep();

  expect(report.flagged.map((f) => f.keyHash)).toEqual([runaway]);
  const listed = await flagsOf("org_spend");
  expect(listed).toEqual([
    {
      id: expect.stringMatching(/^flag_[A-Za-z0-9_-]{22}$/),
      subject_kind: "key",
      subject: runaway.slice(0, 12),
      key_name: "batch job",
      key_hash: runaway,
      action: "alert",
      kind: "spend",
      window_start: "2026-11-21T09:50:00.000Z",
      window_end: "2026-11-21T10:05:00.000Z",
      spend: 6,
      usual_spend: 1,
      requests: 3,
      usual_requests: 1 / 96,
      created_at: "2026-11-21T10:05:00.000Z",
    },
  ]);
  const published = await waitFor(() => h.flagged.find((f) => f.eventId === listed[0]?.id), { what: "the flag's event" });
  expect(published.key).toBe("org_spend");
  expect(published.event).toMatchObject({
    flagId: listed[0]?.id,
    orgId: "org_spend",
    subjectKind: "key",
    subject: runaway.slice(0, 12),
    keyHash: runaway,
    keyName: "batch job",
    action: "alert",
    kind: "spend",
    windowStartMs: BigInt(Date.parse("2026-11-21T09:50:00.000Z")),
    windowEndMs: BigInt(T.getTime()),
    spendNanodollars: 6_000_000_000n,
    usualSpendNanodollars: 1_000_000_000n,
    requests: 3n,
    createdAtMs: BigInt(T.getTime()),
  });
  expect(published.event.usualRequests).toBeCloseTo(1 / 96, 12);
});

test("takes the usual from the 24 hours before the window only", async () => {
  const key = keyHash();
  await publishAndCount([
    // Older than the usual span (which starts at 09:50 yesterday): not part of the usual.
    completion(new Date("2026-11-20T09:45:00.000Z"), { orgId: "org_usual", keyHash: key, usd: 960 }),
    ...burst("org_usual", key, 3, 2),
  ]);

  await h.runaway.sweep();

  expect(await flagsOf("org_usual")).toEqual([expect.objectContaining({ kind: "spend", spend: 6, usual_spend: 0 })]);
});

test("flags a key that holds 300 requests at 5 times its usual count", async () => {
  const busy = keyHash();
  const quiet = keyHash();
  await publishAndCount([...burst("org_rate", busy, 300, 0.0001), ...burst("org_rate", quiet, 299, 0.0001)]);

  await h.runaway.sweep();

  expect(await flagsOf("org_rate")).toEqual([
    expect.objectContaining({ key_hash: busy, kind: "rate", requests: 300, usual_requests: 0, spend: 0.03 }),
  ]);
});

test("with runaway_action pause a key's flag says paused; an agent's never does", async () => {
  expect((await h.put("/v1/alerts/settings", "org_pause", { runaway_action: "pause" })).status).toBe(200);
  const key = keyHash();
  await publishAndCount(burst("org_pause", key, 5, 2, { agent: "crawler" }));

  await h.runaway.sweep();

  const flags = await flagsOf("org_pause");
  expect(flags.map((f) => [f.subject_kind, f.subject, f.key_hash, f.key_name, f.action])).toEqual(
    expect.arrayContaining([
      ["key", key.slice(0, 12), key, "batch job", "paused"],
      ["agent", "crawler", null, null, "alert"],
    ]),
  );
  expect(flags).toHaveLength(2);
  await waitFor(() => h.flagged.filter((f) => f.event.orgId === "org_pause").length === 2, { what: "both events" });
  const actions = h.flagged.filter((f) => f.event.orgId === "org_pause").map((f) => [f.event.subjectKind, f.event.action]);
  expect(actions).toEqual(expect.arrayContaining([["key", "paused"], ["agent", "alert"]]));
});

test("flags a subject at most once an hour", async () => {
  const key = keyHash();
  await publishAndCount(burst("org_hourly", key, 3, 2));
  expect((await h.runaway.sweep()).flagged.filter((f) => f.orgId === "org_hourly")).toHaveLength(1);

  // Still running away five and fifty-five minutes later: no new flag.
  for (const later of [5 * MIN, 55 * MIN]) {
    clock.set(new Date(T.getTime() + later));
    await publishAndCount(burst("org_hourly", key, 3, 2, { spanMs: 4 * MIN }));
    expect((await h.runaway.sweep()).flagged.filter((f) => f.orgId === "org_hourly")).toEqual([]);
  }

  // An hour after the first flag it may be flagged again.
  clock.set(new Date(T.getTime() + HOUR));
  await publishAndCount(burst("org_hourly", key, 3, 20, { spanMs: 4 * MIN }));
  expect((await h.runaway.sweep()).flagged.filter((f) => f.orgId === "org_hourly")).toHaveLength(1);
  expect(await flagsOf("org_hourly")).toHaveLength(2);
});

test("two sweepers at the same moment raise one flag per subject", async () => {
  const replica = await h.startReplica();
  const key = keyHash();
  await publishAndCount(burst("org_race", key, 3, 2, { agent: "racer" }));

  const [a, b] = await Promise.all([h.runaway.sweep(), replica.sweep()]);

  const raised = [...a.flagged, ...b.flagged].filter((f) => f.orgId === "org_race");
  expect(raised.map((f) => f.subjectKind).sort()).toEqual(["agent", "key"]);
  expect(await flagsOf("org_race")).toHaveLength(2);
});

test("drops buckets and remembered request ids older than 25 hours", async () => {
  const key = keyHash();
  const old = completion(ago(10 * MIN), { orgId: "org_prune", keyHash: key, usd: 0.01 });
  await publishAndCount([old]);

  clock.set(new Date(T.getTime() + 25 * HOUR + 10 * MIN));
  await h.runaway.sweep();

  expect((await h.db.query("SELECT 1 FROM buckets WHERE org_id = 'org_prune'")).rowCount).toBe(0);
  expect((await h.db.query("SELECT 1 FROM counted_requests WHERE request_id = $1", [old.requestId])).rowCount).toBe(0);
});

describe("a flag whose event the bus did not take", () => {
  let broken: RunawayHarness;
  let failing = true;

  beforeAll(async () => {
    // A namespace of its own: this second service must not share the first one's consumer group.
    const real = await createBus({ kind: "memory", clientId: "runaway-flaky", namespace: "flaky", log: createLogger({ level: "silent" }) });
    // The bus refuses flag events (an outbox that cannot be written, say) until told otherwise.
    const flaky: EventBus = {
      publish: (e) => (failing && e.topic === TOPICS.runawayFlagged ? Promise.reject(new Error("bus unavailable")) : real.publish(e)),
      subscribe: (o) => real.subscribe(o),
      drain: (ms) => real.drain(ms),
      close: () => real.close(),
    };
    broken = await startRunawayHarness("runawayflaky", clock, { bus: flaky });
  });

  afterAll(async () => {
    await broken.close();
  });

  test("is kept and sent by the next sweep, once, under the flag's id", async () => {
    const key = keyHash();
    await publishAndCount(burst("org_flaky", key, 3, 2), broken);
    const first = await broken.runaway.sweep();
    expect(first.flagged).toHaveLength(1);
    const flagId = first.flagged[0]?.id;
    const stored = await broken.db.query<{ published_at: Date | null }>("SELECT published_at FROM flags WHERE id = $1", [flagId]);
    expect(stored.rows[0]?.published_at).toBeNull();
    expect(broken.flagged).toEqual([]);

    failing = false;
    clock.set(new Date(T.getTime() + 5 * MIN));
    const second = await broken.runaway.sweep();

    expect(second).toEqual({ flagged: [], republished: 1 });
    const sent = await waitFor(() => broken.flagged.find((f) => f.eventId === flagId), { what: "the resent flag" });
    expect(sent.event.keyHash).toBe(key);
    clock.set(new Date(T.getTime() + 10 * MIN));
    expect((await broken.runaway.sweep()).republished).toBe(0);
    expect(await flagsOf("org_flaky", broken)).toHaveLength(1);
  });
});
