import { Writable } from "node:stream";
import { randomBytes } from "node:crypto";
import { createPostgresDb, type Db } from "@router/db";
import { CLIENT_OPTIONS, callUnary, insecure } from "@router/grpc-kit";
import { createLogger } from "@router/logging";
import { ManualClock } from "@router/money";
import { ledger } from "@router/proto";
import { startLedger, type RunningLedger } from "@router/ledger";
import { createTestDatabase, freePort, waitFor, type TestDatabase } from "@router/testkit";
import { DomainError } from "@router/errors";
import { HoldClosings, type HoldClosingBatch } from "../../src/spend/hold-closings";
import { grpcLedgerPort } from "../../src/spend/ledger-port";

/**
 * HoldClosings against a real ledger over gRPC: lease trims, releases and spends go in batches,
 * survive the ledger being away, and reach it once it is back. (Finished requests are settled by
 * the ledger from their records on the bus, not through here.)
 */
const silent = createLogger({ level: "silent" });
const clock = new ManualClock(new Date("2026-11-22T10:00:00.000Z"));

let database: TestDatabase;
let db: Db;
let port: number;
let client: ledger.LedgerServiceClient;
let running: RunningLedger | undefined;
const call = { deadlineMs: 5_000, service: "ledger" };

const ceiling = (subjectId: string): ledger.Ceiling => ({
  subjectKind: "key",
  subjectId,
  limitNanodollars: 1_000_000_000n,
  window: ledger.Window.WINDOW_LIFETIME,
  mode: ledger.LimitMode.LIMIT_MODE_HARD,
  includeByok: true,
  subjectName: "",
});

/** A spend lease of `amount` on the subject's ceiling, as the gateway's SpendLeases asks for one. */
async function lease(subjectId: string, amount = 1_000n): Promise<string> {
  const res = await grpcLedgerPort(client, { deadlineMs: 2_000 }).lease({
    leaseId: `lease_${randomBytes(6).toString("hex")}`,
    orgId: "org_a",
    workspaceId: "",
    agent: "",
    ceilings: [ceiling(subjectId)],
    isByok: true,
    wantNanodollars: amount,
    minNanodollars: amount,
  });
  expect(res).toMatchObject({ granted: true, amountNanodollars: amount });
  return res.holdId;
}

/** What the subject's counter row has reserved (leases' unspent headroom included, unlike Usage). */
async function reserved(subjectId: string): Promise<bigint> {
  const r = await db.query<{ reserved_nanodollars: string }>(
    "SELECT reserved_nanodollars FROM spend_counters WHERE subject_kind = 'key' AND subject_id = $1",
    [subjectId],
  );
  return BigInt(r.rows[0]?.reserved_nanodollars ?? -1);
}

async function used(subjectId: string): Promise<bigint> {
  const res = await callUnary(client, client.usage, { ceilings: [ceiling(subjectId)] }, call);
  return res.usage[0]?.usedNanodollars ?? -1n;
}

const start = async () => {
  running = await startLedger({ db, log: silent, clock, grpcPort: port, closingIntervalMs: 1 });
};

beforeAll(async () => {
  database = await createTestDatabase("holdclosings");
  db = createPostgresDb({ url: database.url, schema: "ledger" });
  port = await freePort();
  client = new ledger.LedgerServiceClient(`127.0.0.1:${port}`, insecure(), {
    ...CLIENT_OPTIONS,
    // Reconnect quickly once the ledger is back.
    "grpc.initial_reconnect_backoff_ms": 50,
    "grpc.max_reconnect_backoff_ms": 100,
  });
});

afterEach(async () => {
  await running?.close();
  running = undefined;
});

afterAll(async () => {
  client.close();
  await db.close();
  await database.drop();
});

test("sends what came up together in one call and applies every trim", async () => {
  await start();
  const sent: number[] = [];
  const port_ = grpcLedgerPort(client, { deadlineMs: 2_000 });
  const closings = new HoldClosings({
    send: (batch) => {
      sent.push(batch.releases.length);
      return port_.closeHolds(batch);
    },
    log: silent,
    batchMs: 20,
  });
  const leases = await Promise.all(Array.from({ length: 5 }, () => lease("key_batch")));
  expect(await reserved("key_batch")).toBe(5_000n);

  leases.slice(0, 4).forEach((h, i) => closings.trim(h, BigInt(100 * (i + 1)), 0n));
  closings.trim(leases[4]!, 0n, 0n);

  await waitFor(async () => (await reserved("key_batch")) === 1_000n, { what: "the trimmed reservations" });
  expect(sent).toEqual([5]);
  expect(closings.size).toBe(0);
});

test("sends a lease's spends of one batch as one sum, and a resent sum counts once", async () => {
  await start();
  const port_ = grpcLedgerPort(client, { deadlineMs: 2_000 });
  const lease = await port_.lease({
    leaseId: "lease_merge",
    orgId: "org_a",
    workspaceId: "",
    agent: "",
    ceilings: [ceiling("key_merge")],
    isByok: true,
    wantNanodollars: 10_000n,
    minNanodollars: 1n,
  });
  expect(lease.granted).toBe(true);
  const sent: HoldClosingBatch[] = [];
  let answers = 0;
  const closings = new HoldClosings({
    send: async (batch) => {
      sent.push(batch);
      const answer = await port_.closeHolds(batch);
      // The first call lands but its answer is lost: the batch must go again unchanged.
      if (++answers === 1) throw new DomainError("unavailable", "ledger: deadline exceeded");
      return answer;
    },
    log: silent,
    batchMs: 20,
    retryMs: 10,
  });
  [100n, 200n, 300n].forEach((cost, i) => closings.spend(lease.holdId, `gen-merge-${i}`, cost, 0n));
  closings.trim(lease.holdId, 0n, 0n);

  await waitFor(() => closings.size === 0 && sent.length === 2, { what: "the resent batch" });
  expect(sent[0]!.spends).toHaveLength(1);
  expect(sent[0]!.spends[0]).toMatchObject({ holdId: lease.holdId, listCostNanodollars: 600n });
  expect(sent[1]!.spends).toEqual(sent[0]!.spends);
  expect(await used("key_merge")).toBe(600n);
});

test("keeps trims while the ledger is away and delivers them once it is back", async () => {
  await start();
  const leases = [await lease("key_outage"), await lease("key_outage")];
  await running!.close();
  running = undefined;

  const lines: string[] = [];
  const log = createLogger({
    level: "info",
    destination: new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }),
  });
  const port_ = grpcLedgerPort(client, { deadlineMs: 300 });
  const closings = new HoldClosings({ send: (batch) => port_.closeHolds(batch), log, batchMs: 1, retryMs: 50 });
  closings.trim(leases[0]!, 400n, 0n);
  closings.trim(leases[1]!, 600n, 0n);

  await waitFor(() => lines.some((l) => l.includes("gateway.ledger.closings_retrying")), { what: "a failed send" });
  expect(closings.size).toBe(2);

  await start();
  await waitFor(async () => (await reserved("key_outage")) === 1_000n, { timeoutMs: 15_000, what: "the delivered trims" });
  expect(closings.size).toBe(0);
  // The ledger commits before its answer reaches this side, where the resumption is logged.
  await waitFor(() => lines.some((l) => l.includes("gateway.ledger.closings_resumed")), { what: "the resumption logged" });
});

test("drops only the item the ledger refuses, logging it, instead of retrying forever", async () => {
  await start();
  const lines: string[] = [];
  const log = createLogger({
    level: "info",
    destination: new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }),
  });
  const port_ = grpcLedgerPort(client, { deadlineMs: 2_000 });
  const closings = new HoldClosings({ send: (batch) => port_.closeHolds(batch), log, batchMs: 1 });

  const good = await lease("key_refused");
  closings.trim("hold_x", -5n, 0n);
  closings.trim(good, 42n, 0n);

  await waitFor(() => lines.some((l) => l.includes("gateway.ledger.closing_refused")), { what: "the refusal" });
  await waitFor(async () => (await reserved("key_refused")) === 42n, { what: "the valid trim" });
  expect(lines.filter((l) => l.includes("gateway.ledger.closing_refused"))).toHaveLength(1);
  expect(closings.size).toBe(0);
});

test("flush on shutdown waits for pending trims to reach the ledger", async () => {
  await start();
  const held = await lease("key_flush");
  const port_ = grpcLedgerPort(client, { deadlineMs: 2_000 });
  const closings = new HoldClosings({ send: (batch) => port_.closeHolds(batch), log: silent, batchMs: 60_000 });

  closings.trim(held, 321n, 0n);
  await closings.flush(5_000);

  expect(await reserved("key_flush")).toBe(321n);
});
