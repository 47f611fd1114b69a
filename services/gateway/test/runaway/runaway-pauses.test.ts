import { createBus, type EventBus } from "@router/bus";
import { createPostgresDb, type Db } from "@router/db";
import { fromUsd, ManualClock } from "@router/money";
import { events, TOPICS } from "@router/proto";
import { startRunaway, type RunningRunaway } from "@router/runaway";
import { createTestDatabase, metricSample, TEST_REDIS_URL, waitFor, type TestDatabase } from "@router/testkit";
import { call, newOrganisation, publicKeysOf, silentLog, startHarness, testSecrets, type Harness } from "../harness";

/**
 * The gateway and runaway flags: the real runaway service (in-process, on the same bus) sweeps and
 * publishes; the gateway pauses the key and drops it from every replica's auth cache through Redis,
 * serves the flag list with `key_paused`, and forwards the settings. The gateways' clock never
 * moves, so a replica that refuses a key it had cached learnt of the pause by eviction, not expiry.
 */

const MIN = 60_000;
let h: Harness;
let replicaUrl: string;
let metricsPorts: number[];
let runawayTestDb: TestDatabase;
let runawayDb: Db;
let runaway: RunningRunaway;
let bus: EventBus;
const runawayClock = new ManualClock(new Date("2026-11-21T10:05:00.000Z"));

beforeAll(async () => {
  const secrets = testSecrets();
  runawayTestDb = await createTestDatabase("gw_runaway_svc");
  runawayDb = createPostgresDb({ url: runawayTestDb.url, schema: "runaway" });
  bus = await createBus({ kind: "memory", clientId: "runaway-in-test", log: silentLog });
  runaway = await startRunaway({
    db: runawayDb,
    bus,
    log: silentLog,
    clock: runawayClock,
    httpPort: 0,
    identityKeys: publicKeysOf(secrets),
    sweepIntervalMs: 0,
  });
  h = await startHarness("gw_runaway", {
    redisUrl: TEST_REDIS_URL,
    secrets,
    runawayUrl: `http://127.0.0.1:${runaway.httpPort}`,
    metricsPort: 0,
  });
  const replica = await h.startAnother();
  replicaUrl = `http://127.0.0.1:${replica.port}`;
  metricsPorts = [h.gateway.metricsPort ?? 0, replica.metricsPort ?? 0];
});

afterAll(async () => {
  await h.close();
  await runaway.close();
  await bus.close();
  await runawayDb.close();
  await runawayTestDb.drop();
});

/** Completions of the key as the gateway publishes them, `usd` each, in the runaway clock's last minutes. */
async function spend(orgId: string, keyHash: string, count: number, usd: number): Promise<void> {
  const now = runawayClock.now().getTime();
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const c = events.RequestCompleted.fromPartial({
      requestId: `gen-${orgId}-${keyHash.slice(0, 6)}-${now}-${i}`,
      orgId,
      keyHash,
      keyName: "runaway app",
      createdAtMs: BigInt(now - (i + 1) * MIN),
      status: "complete",
      listCostNanodollars: fromUsd(usd),
    });
    ids.push(c.requestId);
    await bus.publish({ topic: TOPICS.requestCompleted, key: orgId, type: TOPICS.requestCompleted, id: c.requestId, payload: events.RequestCompleted.encode(c).finish() });
  }
  await waitFor(
    async () => (await runawayDb.query("SELECT 1 FROM counted_requests WHERE request_id = ANY($1)", [ids])).rowCount === count,
    { what: "the completions counted by runaway" },
  );
}

/** A flag event published on the bus as runaway would, for what the sweep cannot be made to produce. */
function publishFlag(flag: Partial<events.RunawayFlagged>): Promise<void> {
  const event = events.RunawayFlagged.fromPartial({ subjectKind: "key", action: "paused", kind: "spend", ...flag });
  return bus.publish({
    topic: TOPICS.runawayFlagged,
    key: event.orgId,
    type: TOPICS.runawayFlagged,
    id: event.flagId,
    payload: events.RunawayFlagged.encode(event).finish(),
  });
}

async function newKey(mgmt: string): Promise<{ key: string; hash: string }> {
  const res = await call(h.url, "POST", "/v1/keys", { key: mgmt, body: { name: "runaway app" } });
  expect(res.status).toBe(201);
  return res.body.data;
}

/** What `GET /v1/key` answers on each replica: 200, or 403 with the error code. */
async function onBothReplicas(key: string): Promise<string[]> {
  return Promise.all(
    [h.url, replicaUrl].map(async (url) => {
      const res = await call(url, "GET", "/v1/key", { key });
      return res.status === 200 ? "ok" : `${res.status} ${res.body.error?.code}`;
    }),
  );
}

async function keyState(mgmt: string, hash: string) {
  const res = await call(h.url, "GET", "/v1/keys", { key: mgmt });
  const key = (res.body.data as Array<Record<string, unknown>>).find((k) => k.hash === hash);
  return { paused: key?.paused, paused_reason: key?.paused_reason };
}

/** A counter summed over both replicas: each flag reaches one of them. */
async function flagsCounted(result: string): Promise<number> {
  let total = 0;
  for (const port of metricsPorts) {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    total += metricSample(await res.text(), "gateway_runaway_flags_total", { result });
  }
  return total;
}

describe("a flag whose action is paused", () => {
  it("pauses the key on every replica at once, shows it in the flag list, and PATCH paused:false resumes it", async () => {
    const org = await newOrganisation(h, "Runaway Co");
    const settings = await call(h.url, "PUT", "/v1/alerts/settings", { key: org.managementKey, body: { runaway_action: "pause" } });
    expect(settings.status).toBe(200);
    expect(settings.body.data).toEqual({ runaway_action: "pause" });
    const { key, hash } = await newKey(org.managementKey);
    // Both replicas have the key cached as active.
    expect(await onBothReplicas(key)).toEqual(["ok", "ok"]);

    await spend(org.orgId, hash, 3, 2);
    const swept = await runaway.sweep();
    expect(swept.flagged.map((f) => [f.keyHash, f.action])).toEqual([[hash, "paused"]]);

    await waitFor(async () => (await onBothReplicas(key)).every((s) => s === "403 key_paused"), {
      timeoutMs: 5_000,
      what: "both replicas to refuse the key",
    });
    expect(await keyState(org.managementKey, hash)).toEqual({ paused: true, paused_reason: "runaway" });
    const chat = await call(replicaUrl, "POST", "/v1/chat/completions", {
      key,
      body: { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "again" }] },
    });
    expect(chat.status).toBe(403);
    expect(chat.body.error).toMatchObject({ code: "key_paused", details: { paused_reason: "runaway" } });

    const flags = await call(replicaUrl, "GET", "/v1/alerts/runaway", { key: org.managementKey });
    expect(flags.status).toBe(200);
    expect(flags.body).toEqual({
      data: [
        {
          id: swept.flagged[0]?.id,
          subject_kind: "key",
          subject: hash.slice(0, 12),
          key_name: "runaway app",
          key_hash: hash,
          key_paused: true,
          action: "paused",
          kind: "spend",
          window_start: "2026-11-21T09:50:00.000Z",
          window_end: "2026-11-21T10:05:00.000Z",
          spend: 6,
          usual_spend: 0,
          requests: 3,
          usual_requests: 0,
          created_at: "2026-11-21T10:05:00.000Z",
        },
      ],
      next_cursor: null,
    });

    const resumed = await call(h.url, "PATCH", `/v1/keys/${hash}`, { key: org.managementKey, body: { paused: false } });
    expect(resumed.status).toBe(200);
    expect(resumed.body.data).toMatchObject({ paused: false, paused_reason: null });
    await waitFor(async () => (await onBothReplicas(key)).every((s) => s === "ok"), { timeoutMs: 5_000, what: "both replicas to serve the key" });
    const after = await call(h.url, "GET", "/v1/alerts/runaway", { key: org.managementKey });
    expect(after.body.data[0]).toMatchObject({ key_hash: hash, key_paused: false, action: "paused" });

    // The same flag delivered again (a replay of the topic) does not pause the resumed key.
    await publishFlag({ flagId: swept.flagged[0]?.id, orgId: org.orgId, keyHash: hash, subject: hash.slice(0, 12) });
    const marker = await newKey(org.managementKey);
    await publishFlag({ flagId: "flag_marker_after_replay", orgId: org.orgId, keyHash: marker.hash });
    await waitFor(async () => (await keyState(org.managementKey, marker.hash)).paused === true, { what: "the marker flag applied" });
    expect(await keyState(org.managementKey, hash)).toEqual({ paused: false, paused_reason: null });
    expect(await onBothReplicas(key)).toEqual(["ok", "ok"]);
    expect(await flagsCounted("duplicate")).toBe(1);
  });
});

describe("flags that pause nothing", () => {
  let org: Awaited<ReturnType<typeof newOrganisation>>;
  beforeAll(async () => {
    org = await newOrganisation(h, "Quiet Co");
  });

  /** Publishes the flags, then a marker flag that pauses a fresh key: flags of one organisation arrive in order. */
  async function afterFlags(flags: Array<Partial<events.RunawayFlagged>>): Promise<void> {
    for (const f of flags) await publishFlag({ orgId: org.orgId, ...f });
    const marker = await newKey(org.managementKey);
    await publishFlag({ flagId: `flag_marker_${marker.hash.slice(0, 8)}`, orgId: org.orgId, keyHash: marker.hash });
    await waitFor(async () => (await keyState(org.managementKey, marker.hash)).paused === true, { what: "the marker flag applied" });
  }

  it("leaves a key alone when the action is alert", async () => {
    const { key, hash } = await newKey(org.managementKey);
    await afterFlags([{ flagId: "flag_alert_only", keyHash: hash, action: "alert" }]);
    expect(await keyState(org.managementKey, hash)).toEqual({ paused: false, paused_reason: null });
    expect(await onBothReplicas(key)).toEqual(["ok", "ok"]);
  });

  it("keeps a key paused by hand paused for the manual reason", async () => {
    const { hash } = await newKey(org.managementKey);
    expect((await call(h.url, "PATCH", `/v1/keys/${hash}`, { key: org.managementKey, body: { paused: true } })).status).toBe(200);
    await afterFlags([{ flagId: "flag_on_manual", keyHash: hash }]);
    expect(await keyState(org.managementKey, hash)).toEqual({ paused: true, paused_reason: "manual" });
  });

  it("never pauses a revoked key, nor a key of another organisation", async () => {
    const revoked = await newKey(org.managementKey);
    expect((await call(h.url, "DELETE", `/v1/keys/${revoked.hash}`, { key: org.managementKey })).status).toBe(200);
    const rival = await newOrganisation(h, "Rival Co");
    const theirs = await newKey(rival.managementKey);
    await afterFlags([
      { flagId: "flag_on_revoked", keyHash: revoked.hash },
      // A flag of this organisation naming another organisation's key.
      { flagId: "flag_on_foreign", keyHash: theirs.hash },
    ]);
    const rows = await h.consoleDb.query<{ hash: string; paused: boolean }>("SELECT hash, paused FROM keys WHERE hash = ANY($1)", [
      [revoked.hash, theirs.hash],
    ]);
    expect(rows.rows.map((r) => r.paused)).toEqual([false, false]);
    expect(await onBothReplicas(theirs.key)).toEqual(["ok", "ok"]);
  });

  it("never pauses anything for an agent", async () => {
    const { hash } = await newKey(org.managementKey);
    await afterFlags([{ flagId: "flag_agent", subjectKind: "agent", subject: "crawler", keyHash: "", action: "alert" }]);
    expect(await keyState(org.managementKey, hash)).toEqual({ paused: false, paused_reason: null });
  });
});

describe("the alert routes through the gateway", () => {
  it("answers an agent's flag with key_paused false and another organisation sees none of it", async () => {
    const org = await newOrganisation(h, "Agents Co");
    const other = await newOrganisation(h, "Other Co");
    const { hash } = await newKey(org.managementKey);
    runawayClock.advance(2 * 60 * MIN);
    const now = runawayClock.now().getTime();
    const c = events.RequestCompleted.fromPartial({
      requestId: `gen-agent-${now}`,
      orgId: org.orgId,
      keyHash: hash,
      agent: "crawler",
      createdAtMs: BigInt(now - MIN),
      status: "complete",
      listCostNanodollars: fromUsd(7),
    });
    await bus.publish({ topic: TOPICS.requestCompleted, key: org.orgId, type: TOPICS.requestCompleted, id: c.requestId, payload: events.RequestCompleted.encode(c).finish() });
    await waitFor(async () => (await runawayDb.query("SELECT 1 FROM counted_requests WHERE request_id = $1", [c.requestId])).rowCount === 1);
    await runaway.sweep();

    const flags = await call(h.url, "GET", "/v1/alerts/runaway", { key: org.managementKey });
    expect(flags.status).toBe(200);
    const bySubject = Object.fromEntries((flags.body.data as Array<Record<string, unknown>>).map((f) => [f.subject_kind, f]));
    expect(bySubject.agent).toMatchObject({ subject: "crawler", key_hash: null, key_name: null, key_paused: false, action: "alert" });
    // The organisation's setting is alert: the key was flagged but not paused.
    expect(bySubject.key).toMatchObject({ key_hash: hash, key_paused: false, action: "alert" });
    expect((await call(h.url, "GET", "/v1/alerts/runaway", { key: other.managementKey })).body.data).toEqual([]);
  });

  it("forwards the settings, refusing what runaway refuses", async () => {
    const org = await newOrganisation(h, "Settings Co");
    expect((await call(h.url, "GET", "/v1/alerts/settings", { key: org.managementKey })).body).toEqual({ data: { runaway_action: "alert" } });
    const bad = await call(h.url, "PUT", "/v1/alerts/settings", { key: org.managementKey, body: { runaway_action: "halt" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: "invalid_request", details: { field: "runaway_action" } });
    const { key } = await newKey(org.managementKey);
    expect((await call(h.url, "GET", "/v1/alerts/settings", { key })).status).toBe(403);
    expect((await call(h.url, "GET", "/v1/alerts/runaway", { key })).status).toBe(403);
    expect((await call(h.url, "GET", "/v1/alerts/runaway")).status).toBe(401);
  });
});
