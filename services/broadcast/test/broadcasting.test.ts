import type { IncomingEvent } from "@router/bus";
import { ManualClock } from "@router/money";
import { SIGNATURE_HEADER, verifySignature } from "@router/outbound";
import { events, eventViews } from "@router/proto";
import { waitFor, type ReceivedRequest } from "@router/testkit";
import { REQUEST_COMPLETED_TOPIC } from "../src/app";
import { pruneHandledEvents } from "../src/consumer/handled-events";
import { isSampled } from "../src/records/sampling";
import { servedRequest } from "./broadcast-fixtures";
import { startBroadcastHarness, type BroadcastHarness } from "./broadcast-harness";

const NOW = new Date("2026-11-21T10:00:00.000Z");
const PATH = "/v1/broadcast/destinations";
let h: BroadcastHarness;

beforeAll(async () => {
  h = await startBroadcastHarness("bcdeliver", new ManualClock(NOW));
});

afterAll(async () => {
  await h.close();
});

/** Adds a destination for `orgId` delivering to the receiver at `path`; returns its row and secret. */
async function addDestination(orgId: string, path: string, body: Record<string, unknown> = {}) {
  const res = await h.call("POST", PATH, orgId, { kind: "webhook", url: `${h.receiver.url}${path}`, ...body });
  expect(res.status).toBe(201);
  return res.json.data as { id: string; signing_secret?: string };
}

async function destination(orgId: string, id: string) {
  const list = (await h.call("GET", PATH, orgId)).json.data as { id: string }[];
  return list.find((d) => d.id === id) as Record<string, unknown>;
}

const at = (path: string): ReceivedRequest[] => h.receiver.requests.filter((r) => r.path === path);
const requestIdOf = (r: ReceivedRequest): string => (JSON.parse(r.body) as { request: { id: string } }).request.id;

test("delivers a signed webhook record and an OTLP span with its header, and records the success", async () => {
  const hook = await addDestination("org_both", "/both/hook");
  const traces = await addDestination("org_both", "/both/v1/traces", { kind: "otlp", header_name: "x-api-key", header_value: "vendor-key-1234" });
  const event = servedRequest("org_both");

  await h.publish(event);
  await waitFor(() => at("/both/hook").length === 1 && at("/both/v1/traces").length === 1, { what: "both deliveries" });
  await h.service.idle();

  const webhook = at("/both/hook")[0]!;
  expect(webhook.headers["content-type"]).toBe("application/json");
  expect(verifySignature(webhook.headers[SIGNATURE_HEADER] as string, webhook.body, hook.signing_secret ?? "", { nowS: NOW.getTime() / 1000 })).toBe(true);
  const record = JSON.parse(webhook.body) as { type: string; test: boolean; request: Record<string, unknown> };
  expect(record).toMatchObject({ type: "request.completed", test: false, request: { id: event.requestId, model: "openai/gpt-4o-mini", client: "Acme Corp" } });

  const span = at("/both/v1/traces")[0]!;
  expect(span.headers["x-api-key"]).toBe("vendor-key-1234");
  expect(span.headers[SIGNATURE_HEADER]).toBeUndefined();
  const otlp = JSON.parse(span.body) as { resourceSpans: { scopeSpans: { spans: { name: string; attributes: { key: string }[] }[] }[] }[] };
  const spans = otlp.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
  expect(spans.map((s) => s.name)).toEqual(["chat openai/gpt-4o-mini"]);
  expect(spans[0]?.attributes.map((a) => a.key)).toEqual(expect.arrayContaining(["gen_ai.request.model", "gen_ai.usage.input_tokens", "router.run.id"]));

  const metrics = await (await fetch(`${h.base}/metrics`)).text();
  expect(metrics).toMatch(/broadcast_deliveries_total\{kind="webhook",status="sent",service="broadcast"\} [1-9]/);
  expect(metrics).toMatch(/broadcast_deliveries_total\{kind="otlp",status="sent",service="broadcast"\} [1-9]/);
  for (const id of [hook.id, traces.id]) {
    expect(await destination("org_both", id)).toMatchObject({
      last_attempt_at: NOW.toISOString(),
      last_success_at: NOW.toISOString(),
      last_http_status: 200,
      last_error: null,
    });
  }
});

test("a redelivered event, or the same request under another event id, is never delivered twice", async () => {
  await addDestination("org_replay", "/replay");
  const event = servedRequest("org_replay");

  await h.publish(event, "evt-replay-1");
  await waitFor(() => at("/replay").length === 1, { what: "the first delivery" });
  await h.publish(event, "evt-replay-1");
  await h.publish(event, "evt-replay-2");
  // One key keeps its order: once the marker arrives, both copies were handled.
  const marker = servedRequest("org_replay");
  await h.publish(marker);
  await waitFor(() => at("/replay").some((r) => requestIdOf(r) === marker.requestId), { what: "the marker" });
  await h.service.idle();

  expect(at("/replay").map(requestIdOf)).toEqual([event.requestId, marker.requestId]);
});

test("sends each destination the requests its sample rate picks, the same ones on every run", async () => {
  await addDestination("org_sample", "/sample/all");
  await addDestination("org_sample", "/sample/tenth", { sample_rate: 0.1 });
  await addDestination("org_sample", "/sample/half", { sample_rate: 0.5 });
  const sent = Array.from({ length: 40 }, () => servedRequest("org_sample"));

  for (const e of sent) await h.publish(e);
  await waitFor(() => at("/sample/all").length === sent.length, { what: "every request at rate 1" });
  await h.service.idle();

  const ids = sent.map((e) => e.requestId);
  const half = at("/sample/half").map(requestIdOf);
  const tenth = at("/sample/tenth").map(requestIdOf);
  expect(new Set(half)).toEqual(new Set(ids.filter((id) => isSampled(id, 0.5))));
  expect(new Set(tenth)).toEqual(new Set(ids.filter((id) => isSampled(id, 0.1))));
  expect(half.length).toBeGreaterThan(0);
  expect(half.length).toBeLessThan(sent.length);
  expect(tenth.every((id) => half.includes(id))).toBe(true);
});

test("forgets handled events after the retention, and only those", async () => {
  await h.db.query("INSERT INTO handled_events (event_id, request_id, handled_at) VALUES ('evt-old', 'gen-old', $1), ('evt-new', 'gen-new', $2)", [
    new Date("2026-11-01T00:00:00.000Z"),
    new Date("2026-11-20T00:00:00.000Z"),
  ]);
  expect(await pruneHandledEvents(h.db, new Date("2026-11-14T10:00:00.000Z"))).toBe(1);
  const { rows } = await h.db.query<{ event_id: string }>("SELECT event_id FROM handled_events WHERE event_id IN ('evt-old', 'evt-new')");
  expect(rows.map((r) => r.event_id)).toEqual(["evt-new"]);
});

test("a paused destination receives nothing until it is resumed", async () => {
  await addDestination("org_pause", "/pause/marker");
  const paused = await addDestination("org_pause", "/pause/paused");
  expect((await h.call("PATCH", `${PATH}/${paused.id}`, "org_pause", { disabled: true })).status).toBe(200);

  const whilePaused = servedRequest("org_pause");
  await h.publish(whilePaused);
  await waitFor(() => at("/pause/marker").length === 1, { what: "the active destination's delivery" });
  await h.service.idle();
  expect(at("/pause/paused")).toHaveLength(0);

  expect((await h.call("PATCH", `${PATH}/${paused.id}`, "org_pause", { disabled: false })).status).toBe(200);
  const afterResume = servedRequest("org_pause");
  await h.publish(afterResume);
  await waitFor(() => at("/pause/paused").length === 1, { what: "the resumed destination's delivery" });
  expect(requestIdOf(at("/pause/paused")[0]!)).toBe(afterResume.requestId);
  expect(await destination("org_pause", paused.id)).toMatchObject({ disabled: false, last_http_status: 200 });
});

test("another organisation's requests never reach a destination", async () => {
  await addDestination("org_mine", "/mine");
  await h.publish(servedRequest("org_theirs"));
  const mine = servedRequest("org_mine");
  await h.publish(mine);
  await waitFor(() => at("/mine").length === 1, { what: "the own request" });
  await h.service.idle();
  expect(at("/mine").map(requestIdOf)).toEqual([mine.requestId]);
});

test("a receiver answering 500 is retried, and the failure is recorded on the destination", async () => {
  const failing = await addDestination("org_fail", "/fail/hook");

  await h.publish(servedRequest("org_fail"));
  await waitFor(async () => (await destination("org_fail", failing.id)).last_attempt_at !== null, { what: "the recorded failure" });

  // retries: 2 in the harness, so three attempts in all.
  expect(at("/fail/hook")).toHaveLength(3);
  expect(await destination("org_fail", failing.id)).toMatchObject({
    last_attempt_at: NOW.toISOString(),
    last_success_at: null,
    last_http_status: 500,
    last_error: "the receiver answered HTTP 500 (after 3 attempts)",
  });
});

test("a sealed secret moved to another destination does not open: the delivery fails and says why", async () => {
  const donor = await addDestination("org_moved", "/moved/donor");
  const victim = await addDestination("org_moved", "/moved/victim");
  await h.db.query("UPDATE destinations SET signing_secret_sealed = (SELECT signing_secret_sealed FROM destinations WHERE id = $1) WHERE id = $2", [
    donor.id,
    victim.id,
  ]);
  await h.call("PATCH", `${PATH}/${donor.id}`, "org_moved", { disabled: true });

  await h.publish(servedRequest("org_moved"));
  await waitFor(async () => (await destination("org_moved", victim.id)).last_attempt_at !== null, { what: "the recorded failure" });
  expect(at("/moved/victim")).toHaveLength(0);
  expect(await destination("org_moved", victim.id)).toMatchObject({
    last_http_status: null,
    last_error: expect.stringContaining("cannot be opened"),
  });
});

test("a receiver that never answers holds up neither consumption nor the other destinations", async () => {
  const slow = await addDestination("org_slow", "/hang/hook");
  await addDestination("org_slow", "/slow-peer/hook");
  const sent = Array.from({ length: 20 }, () => servedRequest("org_slow"));

  for (const e of sent) await h.publish(e);
  // Every event is claimed and its delivery queued while the first deliveries still hang: none can
  // end before its three attempts of 2 s have timed out.
  await waitFor(
    async () => {
      const { rows } = await h.db.query<{ n: string }>("SELECT count(*)::text AS n FROM handled_events WHERE request_id = ANY($1::text[])", [
        sent.map((e) => e.requestId),
      ]);
      return Number(rows[0]?.n) === sent.length;
    },
    { what: "every event handled", timeoutMs: 5_000 },
  );
  // The other destination of the organisation gets every request meanwhile.
  await waitFor(() => at("/slow-peer/hook").length === sent.length, { what: "the other destination's deliveries", timeoutMs: 5_000 });
  expect(await destination("org_slow", slow.id)).toMatchObject({ last_attempt_at: null });
  // At most two deliveries in flight per destination (the lane), the rest waiting.
  expect(at("/hang/hook")).toHaveLength(2);
  const metrics = await (await fetch(`${h.base}/metrics`)).text();
  expect(metrics).toMatch(/broadcast_deliveries_in_flight\{service="broadcast"\} [1-9]/);
  expect(metrics).toMatch(/broadcast_queue_depth\{service="broadcast"\} [1-9]/);
});

describe("the test record", () => {
  it("is delivered at once, marked as a test, and answers the outcome", async () => {
    const hook = await addDestination("org_test", "/test/hook");
    const res = await h.call("POST", `${PATH}/${hook.id}/test`, "org_test");

    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({ delivered: true, http_status: 200, error: null });
    const got = at("/test/hook");
    expect(got).toHaveLength(1);
    expect(JSON.parse(got[0]!.body)).toMatchObject({ type: "request.completed", test: true, request: { model: "router/test", provider: "router" } });
    expect(verifySignature(got[0]!.headers[SIGNATURE_HEADER] as string, got[0]!.body, hook.signing_secret ?? "", { nowS: NOW.getTime() / 1000 })).toBe(true);
  });

  it("reports a failing receiver in its own words and records it", async () => {
    const traces = await addDestination("org_test", "/fail/v1/traces", { kind: "otlp" });
    const res = await h.call("POST", `${PATH}/${traces.id}/test`, "org_test");

    expect(res.json.data).toEqual({ delivered: false, http_status: 500, error: "the receiver answered HTTP 500 (after 3 attempts)" });
    expect(await destination("org_test", traces.id)).toMatchObject({ last_http_status: 500, last_error: res.json.data.error });
  });
});

test("dead-letters a payload it cannot decode after the bus's retries", async () => {
  const deadLettered: IncomingEvent[] = [];
  const dlq = await h.bus.subscribe({
    topic: `${REQUEST_COMPLETED_TOPIC}.dlq`,
    group: "broadcast-test-dlq",
    handler: async (e) => {
      deadLettered.push(e);
    },
  });
  await h.bus.publish({ topic: REQUEST_COMPLETED_TOPIC, key: "org_poison", type: REQUEST_COMPLETED_TOPIC, payload: new Uint8Array([0xff, 0xff]), id: "evt-poison" });

  await waitFor(() => deadLettered.some((e) => e.id === "evt-poison"), { what: "the dead letter" });
  await dlq.close();
});

test("dead-letters an event of an organisation with a destination when only its request and organisation can be read, and claims nothing", async () => {
  await addDestination("org_half", "/half/hook");
  const deadLettered: IncomingEvent[] = [];
  const dlq = await h.bus.subscribe({
    topic: `${REQUEST_COMPLETED_TOPIC}.dlq`,
    group: "broadcast-test-dlq-half",
    handler: async (e) => {
      deadLettered.push(e);
    },
  });
  // The request and organisation decode; `usage` (field 32, length-delimited) holds a truncated
  // varint, which only the whole event's decoding reads.
  const ids = events.RequestCompleted.encode(events.RequestCompleted.fromPartial({ requestId: "gen-half", orgId: "org_half" })).finish();
  const payload = new Uint8Array([...ids, 0x82, 0x02, 0x01, 0xff]);
  expect(eventViews.RequestCompletedRef.decode(payload)).toEqual({ requestId: "gen-half", orgId: "org_half" });
  expect(() => events.RequestCompleted.decode(payload)).toThrow();

  await h.bus.publish({ topic: REQUEST_COMPLETED_TOPIC, key: "org_half", type: REQUEST_COMPLETED_TOPIC, payload, id: "evt-half" });

  await waitFor(() => deadLettered.some((e) => e.id === "evt-half"), { what: "the dead letter" });
  await dlq.close();
  const { rows } = await h.db.query("SELECT event_id FROM handled_events WHERE event_id = 'evt-half' OR request_id = 'gen-half'");
  expect(rows).toEqual([]);
  expect(at("/half/hook")).toEqual([]);
});
