import { randomBytes } from "node:crypto";
import { events, ledger, TOPICS } from "@router/proto";
import { waitFor } from "@router/testkit";
import { keyCeiling, requestId, startTestLedger, USD, type TestLedger } from "./ledger-fixture";

/**
 * The ledger settles finished requests from `router.request.completed.v1` on the bus (the
 * gateway's durable record), idempotent by request id, and ends holds their gateway stopped
 * renewing as lost: charged at what they covered, recorded as `router.gateway_lost`.
 */
const TTL_MS = 60_000;
const W = USD / 10n;

let l: TestLedger;
const published: events.RequestCompleted[] = [];
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  l = await startTestLedger({ label: "completed", holdTtlMs: TTL_MS, sweepIntervalMs: 20 });
  const sub = await l.bus.subscribe({
    topic: TOPICS.requestCompleted,
    group: "completed-test",
    handler: async (e) => {
      published.push(events.RequestCompleted.decode(e.payload));
    },
  });
  close = () => sub.close();
});
afterAll(async () => {
  await close?.();
  await l.close();
});

async function publish(record: Partial<events.RequestCompleted> & { requestId: string }): Promise<void> {
  const event = events.RequestCompleted.fromPartial({ orgId: "org_a", ...record });
  await l.bus.publish({
    topic: TOPICS.requestCompleted,
    key: "org_a",
    type: TOPICS.requestCompleted,
    id: record.requestId,
    payload: events.RequestCompleted.encode(event).finish(),
  });
}

async function admit(ceiling: ledger.Ceiling, id = requestId()): Promise<{ holdId: string; id: string }> {
  const res = await l.admit({ requestId: id, orgId: "org_a", ceilings: [ceiling], worstCaseNanodollars: W });
  expect(res.admitted).toBe(true);
  return { holdId: res.holdId, id };
}

const holdState = async (holdId: string) =>
  (await l.db.query<{ state: string }>("SELECT state FROM holds WHERE hold_id = $1", [holdId])).rows[0]?.state;

async function counter(c: ledger.Ceiling): Promise<{ settled: bigint; reserved: bigint } | undefined> {
  const r = await l.db.query<{ settled_nanodollars: bigint; reserved_nanodollars: bigint }>(
    "SELECT settled_nanodollars, reserved_nanodollars FROM spend_counters WHERE subject_kind = $1 AND subject_id = $2",
    [c.subjectKind, c.subjectId],
  );
  const row = r.rows[0];
  return row && { settled: BigInt(row.settled_nanodollars), reserved: BigInt(row.reserved_nanodollars) };
}

const recorded = async (id: string) =>
  (await l.db.query("SELECT 1 FROM recorded_requests WHERE request_id = $1", [id])).rowCount === 1;

describe("settlement from router.request.completed.v1", () => {
  it("settles a served request's hold with its list cost, once however often the record arrives", async () => {
    const key = keyCeiling();
    const { holdId, id } = await admit(key);
    await publish({ requestId: id, served: true, listCostNanodollars: 42_000n });
    await publish({ requestId: id, served: true, listCostNanodollars: 42_000n });

    await waitFor(async () => (await holdState(holdId)) === "settled", { what: "the hold settled" });
    await waitFor(async () => (await l.used(key)) === 42_000n, { what: "usage of the cost" });
    expect(await recorded(id)).toBe(true);
  });

  it("releases an unserved request's hold", async () => {
    const key = keyCeiling();
    const { holdId, id } = await admit(key);
    await publish({ requestId: id, served: false, status: "error" });

    await waitFor(async () => (await holdState(holdId)) === "released", { what: "the hold released" });
    expect(await l.used(key)).toBe(0n);
  });

  it("settles a request admitted from a spend lease on the lease, once", async () => {
    const key = keyCeiling();
    const lease = await l.lease({ leaseId: `lease-${randomBytes(6).toString("hex")}`, orgId: "org_a", ceilings: [key], wantNanodollars: 100_000n });
    expect(lease.granted).toBe(true);
    const id = requestId();
    await publish({ requestId: id, served: true, spendLeaseHoldId: lease.holdId, listCostNanodollars: 30_000n });
    await publish({ requestId: id, served: true, spendLeaseHoldId: lease.holdId, listCostNanodollars: 30_000n });

    await waitFor(async () => (await l.used(key)) === 30_000n, { what: "the lease's spend as usage" });
    const row = await l.db.query<{ spent_nanodollars: string }>("SELECT spent_nanodollars FROM holds WHERE hold_id = $1", [lease.holdId]);
    expect(BigInt(row.rows[0]?.spent_nanodollars ?? -1)).toBe(30_000n);
  });

  it("leaves a record without `served` (a gateway older than durable settlement) to its CloseHolds", async () => {
    const key = keyCeiling();
    const { holdId, id } = await admit(key);
    await publish({ requestId: id, listCostNanodollars: 42_000n });
    // A record that is handled after it: once it settles, the first one was passed over.
    const marker = await admit(keyCeiling());
    await publish({ requestId: marker.id, served: false });
    await waitFor(async () => (await holdState(marker.holdId)) === "released", { what: "the later record handled" });

    expect(await holdState(holdId)).toBe("held");
    expect(await recorded(id)).toBe(false);
  });

  it("keeps a lease's counted spends reserved when it is released before their records arrive", async () => {
    const key = keyCeiling();
    const lease = await l.lease({ leaseId: `lease-${randomBytes(6).toString("hex")}`, orgId: "org_a", ceilings: [key], wantNanodollars: 100_000n });
    // The gateway counted 20 000 spent and released the lease; the record is still on its way.
    await l.closeHolds({ releases: [{ holdId: lease.holdId, keepNanodollars: 0n, spentNanodollars: 20_000n }] });
    expect(await l.used(key)).toBe(20_000n);

    await publish({ requestId: requestId(), served: true, spendLeaseHoldId: lease.holdId, listCostNanodollars: 20_000n });
    const leaseRow = async () =>
      (
        await l.db.query<{ worst: bigint; spent: bigint; state: string }>(
          "SELECT worst_case_nanodollars AS worst, spent_nanodollars AS spent, state FROM holds WHERE hold_id = $1",
          [lease.holdId],
        )
      ).rows[0];
    await waitFor(async () => BigInt((await leaseRow())?.spent ?? 0) === 20_000n, { what: "the spend arrived" });
    // Settled now, and nothing left reserved beyond what arrived.
    expect(await l.used(key)).toBe(20_000n);
    expect(await counter(key)).toEqual({ settled: 20_000n, reserved: 0n });
    expect(await leaseRow()).toMatchObject({ worst: 20_000n, spent: 20_000n, state: "held" });
  });
});

describe("lost gateways", () => {
  it("charges an unrenewed hold its worst case, records it as gateway_lost, and lets a late record replace the charge", async () => {
    const key = keyCeiling();
    const { holdId, id } = await admit(key);
    l.clock.advance(TTL_MS);

    await waitFor(async () => (await holdState(holdId)) === "expired", { what: "the hold expired" });
    const lost = await waitFor(() => published.find((p) => p.requestId === id), { what: "the lost request's record" });
    expect(lost).toMatchObject({ status: "error", errorCode: "router.gateway_lost", listCostNanodollars: W, served: true, settledByLedger: true });
    await waitFor(async () => recorded(id), { what: "the lost request recorded" });
    expect(await l.used(key)).toBe(W);
    // The ledger's own record leaves the hold expired, so the gateway's real record still counts.
    expect(await holdState(holdId)).toBe("expired");

    await publish({ requestId: id, served: true, listCostNanodollars: 7_000n });
    await waitFor(async () => (await holdState(holdId)) === "settled", { what: "the late record settled" });
    expect(await l.used(key)).toBe(7_000n);
  });

  it("charges an unrenewed lease the worst case of the requests it last reported running", async () => {
    const key = keyCeiling();
    const lease = await l.lease({ leaseId: `lease-${randomBytes(6).toString("hex")}`, orgId: "org_a", ceilings: [key], wantNanodollars: 100_000n });
    await l.closeHolds({ leaseCovers: [{ holdId: lease.holdId, inFlightNanodollars: 15_000n, spentNanodollars: 0n }] });
    l.clock.advance(TTL_MS);

    await waitFor(async () => (await holdState(lease.holdId)) === "expired", { what: "the lease expired" });
    expect(await l.used(key)).toBe(15_000n);
  });
});
