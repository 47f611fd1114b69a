import { Writable } from "node:stream";
import { createBus, type EventBus } from "@router/bus";
import { createPostgresDb, type Db } from "@router/db";
import { CLIENT_OPTIONS, callUnary, insecure } from "@router/grpc-kit";
import { createLogger } from "@router/logging";
import { ManualClock } from "@router/money";
import { events, ledger, TOPICS } from "@router/proto";
import { startLedger, type RunningLedger } from "@router/ledger";
import { createTestDatabase, freePort, waitFor, type TestDatabase } from "@router/testkit";
import { HoldClosings } from "../../src/spend/hold-closings";
import { grpcLedgerPort, type LedgerPort } from "../../src/spend/ledger-port";
import { SpendLeases, type LeaseTicket } from "../../src/spend/spend-leases";

/**
 * SpendLeases against a real ledger over gRPC: requests under a hard ceiling are admitted from a
 * lease without a call each, their spend reaches the ledger exactly once (in their
 * router.request.completed.v1 records, on a bus the ledger consumes, as a gateway publishes them),
 * and the unspent part of a lease goes back once the lease has been used.
 */
const silent = createLogger({ level: "silent" });
const clock = new ManualClock(new Date("2026-11-22T10:00:00.000Z"));
const USE_MS = 1000;
const LEASE_TTL_MS = 60_000;
const call = { deadlineMs: 5_000, service: "ledger" };

let database: TestDatabase;
let db: Db;
let port: number;
let client: ledger.LedgerServiceClient;
let running: RunningLedger;
let port_: LedgerPort;
let closings: HoldClosings;
let leases: SpendLeases;
let calls: string[];
let bus: EventBus;
let subject = 0;

const ceiling = (subjectId: string, limitNanodollars: bigint, window = ledger.Window.WINDOW_LIFETIME): ledger.Ceiling => ({
  subjectKind: "key",
  subjectId,
  limitNanodollars,
  window,
  mode: ledger.LimitMode.LIMIT_MODE_HARD,
  includeByok: true,
  subjectName: "",
});

async function used(c: ledger.Ceiling): Promise<bigint> {
  const res = await callUnary(client, client.usage, { ceilings: [c] }, call);
  return res.usage[0]?.usedNanodollars ?? -1n;
}

function newLeases(opts: { lease?: LedgerPort["lease"]; log?: ReturnType<typeof createLogger> } = {}): SpendLeases {
  return new SpendLeases({
    lease: opts.lease ?? ((req) => port_.lease(req)),
    closings,
    clock,
    log: opts.log ?? silent,
    useMs: USE_MS,
    requestsPerLease: 10,
    minRequests: 2,
    onLeaseCall: (outcome) => calls.push(outcome),
  });
}

/**
 * Ends a request admitted from a lease as the gateway's Finishing does: the lease counts it, and its
 * record (served or not, naming the lease) goes to the bus, from which the ledger settles its spend.
 */
async function finish(t: LeaseTicket, cost: { list: bigint } | null, from: SpendLeases = leases): Promise<void> {
  from.finish(t, cost);
  const record = events.RequestCompleted.fromPartial({
    requestId: t.requestId,
    orgId: "org_a",
    served: cost !== null,
    spendLeaseHoldId: t.lease.holdId,
    listCostNanodollars: cost?.list ?? 0n,
    billedCostNanodollars: 0n,
  });
  await bus.publish({
    topic: TOPICS.requestCompleted,
    key: "org_a",
    type: TOPICS.requestCompleted,
    id: t.requestId,
    payload: events.RequestCompleted.encode(record).finish(),
  });
}

let generation = 0;
/** A request's generation id, as the gateway gives each request. */
const generationId = () => `gen-lease-${++generation}`;

/** A fresh hard lifetime ceiling per test, so counters never mix. */
const freshCeiling = (limit: bigint, window?: ledger.Window): ledger.Ceiling => ceiling(`key_lease_${++subject}`, limit, window);
const scope = (c: ledger.Ceiling) => ({ orgId: "org_a", workspaceId: "", agent: "", ceilings: [c] });

async function settled(c: ledger.Ceiling, expected: bigint): Promise<void> {
  await closings.flush(5_000);
  await waitFor(async () => (await used(c)) === expected, { what: `usage ${expected}` });
}

beforeAll(async () => {
  database = await createTestDatabase("spendleases");
  db = createPostgresDb({ url: database.url, schema: "ledger" });
  port = await freePort();
  bus = await createBus({ kind: "memory", clientId: "spend-leases-test", log: silent });
  // The expiry sweep runs often: a lost gateway's lease ends as soon as the clock passes its TTL.
  running = await startLedger({ db, log: silent, clock, grpcPort: port, closingIntervalMs: 1, bus, sweepIntervalMs: 50, leaseTtlMs: LEASE_TTL_MS });
  client = new ledger.LedgerServiceClient(`127.0.0.1:${port}`, insecure(), CLIENT_OPTIONS);
  port_ = grpcLedgerPort(client, { deadlineMs: 5_000 });
});

beforeEach(() => {
  calls = [];
  closings = new HoldClosings({ send: (batch) => port_.closeHolds(batch), log: silent, batchMs: 1 });
  leases = newLeases();
});

afterEach(async () => {
  leases.close();
  await closings.flush(5_000);
});

afterAll(async () => {
  client.close();
  await running.close();
  await bus.close();
  await db.close();
  await database.drop();
});

test("admits many requests from one lease and counts exactly what they spent once it is released", async () => {
  const c = freshCeiling(1_000_000n);
  const tickets: LeaseTicket[] = [];
  for (let i = 0; i < 5; i++) {
    const t = await leases.admit(scope(c), 1_000n, generationId());
    if (!t) throw new Error(`request ${i} was not admitted from a lease`);
    tickets.push(t);
  }
  // One lease of ten requests' worth serves five; the next is asked for only once it is half used.
  expect(calls).toEqual(["granted"]);
  expect(new Set(tickets.map((t) => t.lease)).size).toBe(1);
  // Usage counts the worst case of the requests the lease admitted, not its unspent headroom
  // (Admit still measures the whole lease: reserved).
  await settled(c, 5_000n);

  await Promise.all(tickets.map((t) => finish(t, { list: 300n })));
  // Spent 1 500 of the lease: it moved from reserved to settled once the records arrived; the rest
  // stays reserved, and is headroom, not usage.
  await settled(c, 1_500n);

  clock.advance(USE_MS);
  expect(await leases.admit(scope(c), 1_000n, generationId())).not.toBeNull();
  // The outlived lease went back; the request took a new one, whose worst case is usage.
  expect(calls).toEqual(["granted", "granted"]);
  await settled(c, 1_500n + 1_000n);
});

test("asks for the next lease before the current one runs out, so requests keep being admitted", async () => {
  const c = freshCeiling(1_000_000n);
  for (let i = 0; i < 25; i++) expect(await leases.admit(scope(c), 1_000n, generationId())).not.toBeNull();
  await waitFor(() => calls.length >= 3, { what: "refills" });
  expect(calls.every((o) => o === "granted")).toBe(true);
});

test("renews a lease used past half its time, so the request at its end does not wait for the ledger", async () => {
  const c = freshCeiling(1_000_000n);
  const first = await leases.admit(scope(c), 1_000n, generationId());
  expect(calls).toEqual(["granted"]);
  clock.advance(USE_MS / 2);
  // Still admitted from the first lease; the next one is asked for on the side.
  expect((await leases.admit(scope(c), 1_000n, generationId()))?.lease).toBe(first?.lease);
  await waitFor(() => calls.length === 2, { what: "the renewal" });
  clock.advance(USE_MS / 2);
  // The first lease has outlived its use; the renewed one admits without another call.
  const third = await leases.admit(scope(c), 1_000n, generationId());
  expect(third).not.toBeNull();
  expect(third?.lease).not.toBe(first?.lease);
  expect(calls).toEqual(["granted", "granted"]);
});

test("keeps what running requests may cost when a lease is retired, and releases the rest when they end", async () => {
  const c = freshCeiling(1_000_000n);
  const running = await leases.admit(scope(c), 2_000n, generationId());
  const done = await leases.admit(scope(c), 2_000n, generationId());
  if (!running || !done) throw new Error("not admitted from a lease");
  await finish(done, { list: 500n });
  leases.close();
  // Trimmed: the finished request's cost plus the running one's worst case.
  await settled(c, 500n + 2_000n);
  await finish(running, { list: 700n });
  await settled(c, 1_200n);
});

/** The ledger's state of a lease's hold, and what it still reserves. */
async function leaseHold(holdId: string): Promise<{ state: string; worst: string } | undefined> {
  const r = await db.query<{ state: string; worst: string }>(
    "SELECT state, worst_case_nanodollars::text AS worst FROM holds WHERE hold_id = $1",
    [holdId],
  );
  return r.rows[0];
}

test("retires a lease that nothing used for idleMs before its use is over, so its headroom goes back", async () => {
  const c = freshCeiling(1_000_000n);
  const t = await leases.admit(scope(c), 1_000n, generationId());
  if (!t) throw new Error("not admitted from a lease");
  await finish(t, { list: 400n });
  clock.advance(300);

  await waitFor(async () => (await leaseHold(t.lease.holdId))?.state !== "held", { timeoutMs: 3_000, what: "the idle lease to be released" });
  // Its requests were done: the next one asks for a new lease.
  const next = await leases.admit(scope(c), 1_000n, generationId());
  expect(next?.lease.holdId).not.toBe(t.lease.holdId);
});

test("retires a lease the ledger recalls at its next CloseHolds answer, and leaves requests to Admit for a while", async () => {
  const c = freshCeiling(1_000_000n);
  const first = await leases.admit(scope(c), 1_000n, generationId());
  if (!first) throw new Error("not admitted from a lease");
  await db.query("UPDATE holds SET recalled = true WHERE hold_id = $1", [first.lease.holdId]);
  // A request still running keeps its worst case: the lease is trimmed to it.
  const second = await leases.admit(scope(c), 1_000n, generationId());
  expect(second?.lease.holdId).toBe(first.lease.holdId);

  await waitFor(async () => (await leaseHold(first.lease.holdId))?.worst === "2000", { timeoutMs: 3_000, what: "the recalled lease to be trimmed" });
  expect(await leases.admit(scope(c), 1_000n, generationId())).toBeNull();
});

test("retires an organisation's leases once this gateway changed its budgets: the next request takes a new lease", async () => {
  const c = freshCeiling(1_000_000n);
  const first = await leases.admit(scope(c), 1_000n, generationId());
  if (!first) throw new Error("not admitted from a lease");

  leases.forgetOrganisation("org_other");
  expect((await leases.admit(scope(c), 1_000n, generationId()))?.lease.holdId).toBe(first.lease.holdId);
  leases.forgetOrganisation("org_a");
  const next = await leases.admit(scope(c), 1_000n, generationId());

  expect(next?.lease.holdId).toBeDefined();
  expect(next?.lease.holdId).not.toBe(first.lease.holdId);
  // The retired lease keeps only the worst case of its two running requests.
  await waitFor(async () => (await leaseHold(first.lease.holdId))?.worst === "2000", { timeoutMs: 3_000, what: "the retired lease to be trimmed" });
});

test("a request that was not served spends nothing", async () => {
  const c = freshCeiling(1_000_000n);
  const t = await leases.admit(scope(c), 1_000n, generationId());
  if (!t) throw new Error("not admitted from a lease");
  await finish(t, null);
  leases.close();
  await settled(c, 0n);
});

test("leaves the decision to Admit near the limit, and does not ask again for a while", async () => {
  // Headroom 5 000 / share 4 = 1 250: less than two requests of 1 000, so no lease is granted.
  const c = freshCeiling(5_000n);
  expect(await leases.admit(scope(c), 1_000n, generationId())).toBeNull();
  expect(await leases.admit(scope(c), 1_000n, generationId())).toBeNull();
  expect(calls).toEqual(["refused"]);
  expect(await used(c)).toBe(0n);
  clock.advance(1_000);
  expect(await leases.admit(scope(c), 1_000n, generationId())).toBeNull();
  expect(calls).toEqual(["refused", "refused"]);
});

test("never admits past what the lease holds, however many requests race", async () => {
  // Headroom 40 000 / 4 = 10 000: one lease of ten requests at most.
  const c = freshCeiling(40_000n);
  const admitted = await Promise.all(Array.from({ length: 30 }, () => leases.admit(scope(c), 1_000n, generationId())));
  const fromLeases = admitted.filter((t): t is LeaseTicket => t !== null);
  const held = new Map<unknown, bigint>();
  for (const t of fromLeases) held.set(t.lease, (held.get(t.lease) ?? 0n) + t.worstCase);
  expect(fromLeases.length).toBeGreaterThan(0);
  // Whatever was admitted from leases fits in what the ledger reserved for them, under the limit
  // (usage: what the leases' gateway reported running, once its covers arrived).
  await closings.flush(5_000);
  const reserved = await used(c);
  expect(reserved).toBeLessThanOrEqual(40_000n);
  expect([...held.values()].reduce((a, b) => a + b, 0n)).toBeLessThanOrEqual(reserved);
});

test("stops using a lease at the end of its ceiling's window", async () => {
  const midnight = new Date("2026-11-23T00:00:00.000Z");
  clock.set(new Date(midnight.getTime() - 200));
  const c = freshCeiling(1_000_000n, ledger.Window.WINDOW_DAILY);
  expect(await leases.admit(scope(c), 1_000n, generationId())).not.toBeNull();
  clock.set(midnight);
  expect(await leases.admit(scope(c), 1_000n, generationId())).not.toBeNull();
  // The second request needed a lease in the new window.
  expect(calls).toEqual(["granted", "granted"]);
});

test("a failing ledger leaves the decision to Admit and is logged", async () => {
  const lines: string[] = [];
  const log = createLogger({
    level: "warn",
    destination: new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  });
  leases.close();
  leases = newLeases({ lease: () => Promise.reject(new Error("ledger unreachable")), log });
  expect(await leases.admit(scope(freshCeiling(1_000_000n)), 1_000n, generationId())).toBeNull();
  expect(calls).toEqual(["failed"]);
  expect(lines.join("")).toContain("gateway.ledger.lease_failed");
});

test("serves key ceilings that are all hard, or none (the ledger's budgets alone)", () => {
  const hard = freshCeiling(1n);
  expect(SpendLeases.serves([hard])).toBe(true);
  expect(SpendLeases.serves([])).toBe(true);
  expect(SpendLeases.serves([hard, { ...hard, mode: ledger.LimitMode.LIMIT_MODE_SOFT }])).toBe(false);
});

test("records the requests a lost gateway was serving from a lease, charged their worst case, when the lease expires", async () => {
  const c = freshCeiling(1_000_000n);
  const records = new Map<string, events.RequestCompleted[]>();
  const observer = await bus.subscribe({
    topic: TOPICS.requestCompleted,
    group: "lost-lease-observer",
    handler: async (e) => {
      const r = events.RequestCompleted.decode(e.payload);
      records.set(r.requestId, [...(records.get(r.requestId) ?? []), r]);
    },
  });
  // A gateway of its own, killed mid-stream: once dead, nothing it sends reaches the ledger.
  let alive = true;
  const gatewayClosings = new HoldClosings({
    send: (batch) => (alive ? port_.closeHolds(batch) : Promise.resolve({ unknownHoldIds: [] })),
    log: silent,
    batchMs: 1,
  });
  const gateway = new SpendLeases({ lease: (req) => port_.lease(req), closings: gatewayClosings, clock, log: silent, useMs: USE_MS, requestsPerLease: 10, minRequests: 2 });
  try {
    const served = await gateway.admit(scope(c), 1_000n, generationId());
    const streams = [await gateway.admit(scope(c), 2_000n, generationId()), await gateway.admit(scope(c), 3_000n, generationId())];
    if (!served || !streams[0] || !streams[1]) throw new Error("not admitted from a lease");
    const ids = [served.requestId, ...streams.map((t) => t?.requestId ?? "")];
    await finish(served, { list: 300n }, gateway);
    await gatewayClosings.flush(5_000);
    alive = false;

    clock.advance(LEASE_TTL_MS);
    await waitFor(async () => (await leaseHold(served.lease.holdId))?.state === "expired", { what: "the lost gateway's lease to expire" });
    await waitFor(() => ids.every((id) => records.has(id)), { what: "a record of every request" });
    const [servedRecords, ...streamRecords] = ids.map((id) => records.get(id) ?? []);
    // The served request has its own record only; each stream the ledger's, at its worst case.
    expect(servedRecords).toMatchObject([{ served: true, settledByLedger: false, listCostNanodollars: 300n }]);
    expect(streamRecords).toMatchObject([
      [{ errorCode: "router.gateway_lost", settledByLedger: true, listCostNanodollars: 2_000n, orgId: "org_a" }],
      [{ errorCode: "router.gateway_lost", settledByLedger: true, listCostNanodollars: 3_000n, orgId: "org_a" }],
    ]);
    // The key's usage is exactly what its requests' records say they cost.
    const recordedCost = ids.flatMap((id) => records.get(id) ?? []).reduce((sum, r) => sum + r.listCostNanodollars, 0n);
    expect(recordedCost).toBe(300n + 2_000n + 3_000n);
    await waitFor(async () => (await used(c)) === recordedCost, { what: "usage equal to the recorded costs" });
  } finally {
    gateway.close();
    gatewayClosings.close();
    await observer.close();
  }
});
