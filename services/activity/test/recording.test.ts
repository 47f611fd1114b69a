import { Writable } from "node:stream";
import type { IncomingEvent } from "@router/bus";
import { createPostgresDb, migrate, type Db } from "@router/db";
import { createLogger } from "@router/logging";
import { ManualClock } from "@router/money";
import { createTestDatabase, type TestDatabase } from "@router/testkit";
import { ACTIVITY_MIGRATIONS_DIR, REQUEST_COMPLETED_TOPIC, requestCompletedHandler, requestsCompletedHandler } from "../src/app";
import { completedEvent, encodeEvent, refusedEvent } from "./request-events";

let testDb: TestDatabase;
let db: Db;
let logLines: string[];
let handle: (e: IncomingEvent) => Promise<void>;

function delivery(payload: Uint8Array, id = "evt-1"): IncomingEvent {
  return { id, topic: REQUEST_COMPLETED_TOPIC, key: "org_alpha", type: REQUEST_COMPLETED_TOPIC, payload, headers: {}, attempt: 1 };
}

async function count(table: string, requestId: string): Promise<number> {
  const column = table === "requests" ? "id" : "request_id";
  const r = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table} WHERE ${column} = $1`, [requestId]);
  return Number(r.rows[0]?.n);
}

beforeAll(async () => {
  testDb = await createTestDatabase("activityrec");
  db = createPostgresDb({ url: testDb.url, schema: "activity" });
  await migrate(db, ACTIVITY_MIGRATIONS_DIR);
});

beforeEach(() => {
  logLines = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  const log = createLogger({ level: "debug", destination });
  handle = requestCompletedHandler({ db, log, clock: new ManualClock() });
});

afterAll(async () => {
  await db.close();
  await testDb.drop();
});

test("stores a completed request and its attempts once, however often the event is delivered", async () => {
  const event = completedEvent({
    attempts: [
      { ...completedEvent().attempts[0]!, id: "att_first", attempt: 1, status: "error", httpStatus: 503 },
      { ...completedEvent().attempts[0]!, id: "att_second", attempt: 2 },
    ],
  });

  await handle(delivery(encodeEvent(event), "evt-a"));
  await handle(delivery(encodeEvent(event), "evt-a"));
  await handle(delivery(encodeEvent(event), "evt-redelivered-under-new-id"));

  expect(await count("requests", event.requestId)).toBe(1);
  expect(await count("upstream_attempts", event.requestId)).toBe(2);
});

test("stores a batch of events in one go: each request once, attempts only with a new request", async () => {
  const earlier = completedEvent({ requestId: "gen-batch-0" });
  await handle(delivery(encodeEvent(earlier), "evt-b0"));
  const first = completedEvent({ requestId: "gen-batch-1" });
  const second = completedEvent({
    requestId: "gen-batch-2",
    attempts: [
      { ...completedEvent().attempts[0]!, id: "att_b2_1", attempt: 1, status: "error", httpStatus: 429 },
      { ...completedEvent().attempts[0]!, id: "att_b2_2", attempt: 2 },
    ],
  });
  const handleBatch = requestsCompletedHandler({ db, log: createLogger({ level: "silent" }), clock: new ManualClock() });

  await handleBatch([
    delivery(encodeEvent(earlier), "evt-b0"),
    delivery(encodeEvent(first), "evt-b1"),
    delivery(encodeEvent(second), "evt-b2"),
    delivery(encodeEvent(first), "evt-b1"),
  ]);

  expect(await Promise.all(["gen-batch-0", "gen-batch-1", "gen-batch-2"].map((id) => count("requests", id)))).toEqual([1, 1, 1]);
  expect(await Promise.all(["gen-batch-0", "gen-batch-1", "gen-batch-2"].map((id) => count("upstream_attempts", id)))).toEqual([1, 1, 2]);
});

test("refuses a batch with an undecodable event and stores none of it", async () => {
  const good = completedEvent({ requestId: "gen-batch-good" });
  const handleBatch = requestsCompletedHandler({ db, log: createLogger({ level: "silent" }), clock: new ManualClock() });

  await expect(
    handleBatch([delivery(encodeEvent(good), "evt-good"), delivery(new Uint8Array([0xff, 0xff, 0xff]), "evt-bad")]),
  ).rejects.toThrow(/cannot be decoded/);

  expect(await count("requests", "gen-batch-good")).toBe(0);
});

test("keeps the money, tokens and usage lines of the event", async () => {
  const event = completedEvent({ billedCostNanodollars: 12_345n, listCostNanodollars: 98_765n });

  await handle(delivery(encodeEvent(event)));

  const row = (
    await db.query<Record<string, unknown>>(
      "SELECT billed_cost_nanodollars, list_cost_nanodollars, prompt_tokens, usage_lines, price_version_ids FROM requests WHERE id = $1",
      [event.requestId],
    )
  ).rows[0];
  expect(row?.billed_cost_nanodollars).toBe(12_345n);
  expect(row?.list_cost_nanodollars).toBe(98_765n);
  expect(row?.prompt_tokens).toBe(10);
  expect(row?.usage_lines).toEqual([
    { kind: "prompt", tokens: 10, price_per_million_nanodollars: "150000000", cost_nanodollars: "1500", price_version_id: "7" },
    { kind: "completion", tokens: 5, price_per_million_nanodollars: "600000000", cost_nanodollars: "3000", price_version_id: "7" },
  ]);
  expect((row?.price_version_ids as unknown[]).map(Number)).toEqual([7]);
});

test("stores a refusal with nothing routed as nulls, not empty strings", async () => {
  const event = refusedEvent();

  await handle(delivery(encodeEvent(event)));

  const row = (
    await db.query<Record<string, unknown>>(
      "SELECT served_model, provider_slug, finish_reason, ttft_ms, status, error_code FROM requests WHERE id = $1",
      [event.requestId],
    )
  ).rows[0];
  expect(row).toEqual({
    served_model: null,
    provider_slug: null,
    finish_reason: null,
    ttft_ms: null,
    status: "refused",
    error_code: "budget_exceeded",
  });
});

test("gives an attempt without an id the same id on every delivery", async () => {
  const event = completedEvent({ attempts: [{ ...completedEvent().attempts[0]!, id: "" }] });

  await handle(delivery(encodeEvent(event)));
  await handle(delivery(encodeEvent(event)));

  const ids = (await db.query<{ id: string }>("SELECT id FROM upstream_attempts WHERE request_id = $1", [event.requestId])).rows;
  expect(ids).toHaveLength(1);
  expect(ids[0]?.id).toMatch(/^att_/);
});

test("throws on a payload that is not a request-completed message and logs no payload", async () => {
  const garbage = new Uint8Array([0xff, 0xff, 0xff]);

  await expect(handle(delivery(garbage, "evt-bad"))).rejects.toThrow(/cannot be decoded/);

  const line = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === "activity.event.undecodable");
  expect(line).toMatchObject({ eventId: "evt-bad", topic: REQUEST_COMPLETED_TOPIC });
  expect(Object.keys(line ?? {})).not.toContain("payload");
});

test("throws on a message without a request id or organisation, storing nothing", async () => {
  const event = completedEvent({ orgId: "" });

  await expect(handle(delivery(encodeEvent(event)))).rejects.toThrow(/lacks orgId/);

  expect(await count("requests", event.requestId)).toBe(0);
});

describe("the daily totals and conversations kept with each request", () => {
  const org = "org_rollup";
  const totals = async () =>
    (
      await db.query<Record<string, unknown>>(
        `SELECT workspace_key, to_char(day, 'YYYY-MM-DD') AS day, requests, errors, byok_requests, spend_nanodollars,
           prompt_tokens, completion_tokens, cached_tokens
         FROM daily_totals WHERE org_id = $1 ORDER BY day, workspace_key`,
        [org],
      )
    ).rows;
  const sessions = async () =>
    (await db.query<Record<string, unknown>>("SELECT session_id, started_at, last_seen_at FROM conversations WHERE org_id = $1", [org])).rows;

  test("adds each new request to its day and workspace once, and a replay of the same events changes nothing", async () => {
    const day1a = completedEvent({ requestId: "gen-r1", orgId: org, createdAtMs: BigInt(Date.parse("2026-11-20T23:59:59.999Z")), sessionId: "s-1" });
    const day2a = completedEvent({
      requestId: "gen-r2",
      orgId: org,
      createdAtMs: BigInt(Date.parse("2026-11-21T00:00:00.000Z")),
      isByok: false,
      listCostNanodollars: 1_000n,
      usage: { promptTokens: 100, completionTokens: 20, cachedTokens: 40, reasoningTokens: 5, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0 },
      sessionId: "s-1",
    });
    const day2b = refusedEvent({ requestId: "gen-r3", orgId: org, createdAtMs: BigInt(Date.parse("2026-11-21T12:00:00.000Z")), workspaceId: "", sessionId: "" });
    const handleBatch = requestsCompletedHandler({ db, log: createLogger({ level: "silent" }), clock: new ManualClock() });
    const all = [day1a, day2a, day2b].map((e) => delivery(encodeEvent(e), e.requestId));

    await handleBatch(all);
    const once = await totals();
    await handleBatch(all);
    for (const d of all) await handle(d);

    expect(once).toEqual([
      {
        workspace_key: "ws_client1",
        day: "2026-11-20",
        requests: 1n,
        errors: 0n,
        byok_requests: 1n,
        spend_nanodollars: 2_250n,
        prompt_tokens: 10n,
        completion_tokens: 5n,
        cached_tokens: 0n,
      },
      { workspace_key: "", day: "2026-11-21", requests: 1n, errors: 1n, byok_requests: 1n, spend_nanodollars: 0n, prompt_tokens: 0n, completion_tokens: 0n, cached_tokens: 0n },
      {
        workspace_key: "ws_client1",
        day: "2026-11-21",
        requests: 1n,
        errors: 0n,
        byok_requests: 0n,
        spend_nanodollars: 1_000n,
        prompt_tokens: 100n,
        completion_tokens: 20n,
        cached_tokens: 40n,
      },
    ]);
    expect(await totals()).toEqual(once);
    expect(await sessions()).toEqual([
      { session_id: "s-1", started_at: new Date("2026-11-20T23:59:59.999Z"), last_seen_at: new Date("2026-11-21T00:00:00.000Z") },
    ]);
  });

  test("widens a conversation's span with requests that arrive out of order", async () => {
    const at = (iso: string) => BigInt(Date.parse(iso));
    for (const [id, iso] of [
      ["gen-s-mid", "2026-11-21T10:00:00.000Z"],
      ["gen-s-late", "2026-11-21T11:00:00.000Z"],
      ["gen-s-early", "2026-11-21T09:00:00.000Z"],
    ] as const) {
      await handle(delivery(encodeEvent(completedEvent({ requestId: id, orgId: org, createdAtMs: at(iso), sessionId: "s-2" })), id));
    }

    expect((await sessions()).find((s) => s.session_id === "s-2")).toEqual({
      session_id: "s-2",
      started_at: new Date("2026-11-21T09:00:00.000Z"),
      last_seen_at: new Date("2026-11-21T11:00:00.000Z"),
    });
  });

  test("keeps the workspace name the event carried, and null when it carried none", async () => {
    const named = completedEvent({ orgId: org, workspaceName: "Client One" });
    const older = completedEvent({ orgId: org, workspaceName: "" });

    await handle(delivery(encodeEvent(named), named.requestId));
    await handle(delivery(encodeEvent(older), older.requestId));

    const names = await db.query<{ id: string; workspace_name: string | null }>(
      "SELECT id, workspace_name FROM requests WHERE id = ANY($1::text[])",
      [[named.requestId, older.requestId]],
    );
    expect(Object.fromEntries(names.rows.map((r) => [r.id, r.workspace_name]))).toEqual({
      [named.requestId]: "Client One",
      [older.requestId]: null,
    });
  });
});
