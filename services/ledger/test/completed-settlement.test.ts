import { randomBytes } from "node:crypto";
import { events, ledger, TOPICS } from "@router/proto";
import { waitFor } from "@router/testkit";
import { keyCeiling, requestId, startTestLedger, USD, workspaceId, type TestLedger } from "./ledger-fixture";

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

  it("settles the hold the record names (hold_id) without looking it up, and takes an empty one for no hold", async () => {
    const key = keyCeiling();
    const named = await admit(key);
    const unnamed = await admit(key);
    await publish({ requestId: named.id, holdId: named.holdId, served: true, listCostNanodollars: 7_000n });
    // The gateway said no hold counted this request: nothing is looked up, the request is recorded.
    await publish({ requestId: unnamed.id, holdId: "", served: true, listCostNanodollars: 5_000n });

    await waitFor(async () => (await holdState(named.holdId)) === "settled", { what: "the named hold settled" });
    await waitFor(async () => recorded(unnamed.id), { what: "the request without a hold recorded" });
    expect(await holdState(unnamed.holdId)).toBe("held");
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

  it("keeps a lease's counted spends reserved when it is released before their records arrive, and closes it with the last", async () => {
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
    // Settled now, and nothing left reserved beyond what arrived. Fully spent, the lease is closed:
    // its expiry will not take it for a lost gateway's.
    expect(await l.used(key)).toBe(20_000n);
    expect(await counter(key)).toEqual({ settled: 20_000n, reserved: 0n });
    expect(await leaseRow()).toMatchObject({ worst: 20_000n, spent: 20_000n, state: "released" });
  });

  it("closes a lease its gateway released only once every spend it counted has arrived, and never as lost", async () => {
    const key = keyCeiling();
    const lease = await l.lease({ leaseId: `lease-${randomBytes(6).toString("hex")}`, orgId: "org_a", ceilings: [key], wantNanodollars: 100_000n });
    const [first, second] = [requestId(), requestId()];
    // Two requests ran from it; the gateway counted both spends (12 000 + 8 000) and released it.
    await l.closeHolds({
      leaseCovers: [
        {
          holdId: lease.holdId,
          inFlightNanodollars: 20_000n,
          spentNanodollars: 0n,
          running: [
            { requestId: first, worstCaseNanodollars: 10_000n, startedAtMs: 1n },
            { requestId: second, worstCaseNanodollars: 10_000n, startedAtMs: 1n },
          ],
        },
      ],
    });
    await l.closeHolds({ releases: [{ holdId: lease.holdId, keepNanodollars: 0n, spentNanodollars: 20_000n }] });
    await publish({ requestId: first, served: true, spendLeaseHoldId: lease.holdId, listCostNanodollars: 12_000n });
    await waitFor(async () => recorded(first), { what: "the first spend" });
    expect(await holdState(lease.holdId)).toBe("held");

    await publish({ requestId: second, served: true, spendLeaseHoldId: lease.holdId, listCostNanodollars: 8_000n });
    await waitFor(async () => (await holdState(lease.holdId)) === "released", { what: "the fully spent lease closed" });
    expect(await counter(key)).toEqual({ settled: 20_000n, reserved: 0n });

    l.clock.advance(TTL_MS);
    const marker = await admit(keyCeiling());
    l.clock.advance(TTL_MS);
    // The sweep has passed once the marker hold expired: the lease was left as it was.
    await waitFor(async () => (await holdState(marker.holdId)) === "expired", { what: "a sweep past the lease's expiry" });
    expect(await holdState(lease.holdId)).toBe("released");
    expect(published.filter((p) => p.settledByLedger && (p.requestId === first || p.requestId === second))).toEqual([]);
    expect(await l.used(key)).toBe(20_000n);
  });
});

describe("lost gateways", () => {
  it("charges an unrenewed hold its worst case, records it as gateway_lost, and lets a late record replace the charge", async () => {
    const key = keyCeiling();
    const { holdId, id } = await admit(key);
    l.clock.advance(TTL_MS);

    await waitFor(async () => (await holdState(holdId)) === "expired", { what: "the hold expired" });
    const lost = await waitFor(() => published.find((p) => p.requestId === id), { what: "the lost request's record" });
    expect(lost).toMatchObject({
      status: "error",
      errorCode: "router.gateway_lost",
      keyHash: key.subjectId,
      listCostNanodollars: W,
      served: true,
      settledByLedger: true,
    });
    await waitFor(async () => recorded(id), { what: "the lost request recorded" });
    expect(await l.used(key)).toBe(W);
    // The ledger's own record leaves the hold expired, so the gateway's real record still counts.
    expect(await holdState(holdId)).toBe("expired");

    await publish({ requestId: id, served: true, listCostNanodollars: 7_000n });
    await waitFor(async () => (await holdState(holdId)) === "settled", { what: "the late record settled" });
    expect(await l.used(key)).toBe(7_000n);
  });

  it("records each request a lost lease last reported running whose record never came, charged its worst case", async () => {
    const key = keyCeiling();
    const ws = workspaceId();
    const lease = await l.lease({
      leaseId: `lease-${randomBytes(6).toString("hex")}`,
      orgId: "org_a",
      workspaceId: ws,
      agent: "lease-bot",
      ceilings: [key],
      wantNanodollars: 100_000n,
      isByok: true,
    });
    const [a, b, finished, unserved] = [requestId(), requestId(), requestId(), requestId()];
    const startedAtMs = 1_763_460_000_000n;
    // The gateway's last cover: four requests running. Two of them finished and their records are
    // on the bus, but the gateway died before its next cover.
    await l.closeHolds({
      leaseCovers: [
        {
          holdId: lease.holdId,
          inFlightNanodollars: 20_000n,
          spentNanodollars: 0n,
          running: [
            { requestId: a, worstCaseNanodollars: 5_000n, startedAtMs },
            { requestId: b, worstCaseNanodollars: 4_000n, startedAtMs: startedAtMs + 7n },
            { requestId: finished, worstCaseNanodollars: 6_000n, startedAtMs },
            { requestId: unserved, worstCaseNanodollars: 5_000n, startedAtMs },
          ],
        },
      ],
    });
    await publish({ requestId: finished, workspaceId: ws, agent: "lease-bot", served: true, spendLeaseHoldId: lease.holdId, listCostNanodollars: 2_000n });
    await publish({ requestId: unserved, workspaceId: ws, agent: "lease-bot", served: false, spendLeaseHoldId: lease.holdId, status: "error" });
    await waitFor(async () => (await recorded(finished)) && (await recorded(unserved)), { what: "the two records" });
    l.clock.advance(TTL_MS);

    await waitFor(async () => (await holdState(lease.holdId)) === "expired", { what: "the lease expired" });
    const lostA = await waitFor(() => published.find((p) => p.requestId === a && p.settledByLedger), { what: "a's record" });
    const lostB = await waitFor(() => published.find((p) => p.requestId === b && p.settledByLedger), { what: "b's record" });
    const lostRecord = { orgId: "org_a", keyHash: key.subjectId, workspaceId: ws, agent: "lease-bot", status: "error", errorCode: "router.gateway_lost", served: true, isByok: true };
    expect(lostA).toMatchObject({ ...lostRecord, listCostNanodollars: 5_000n, createdAtMs: startedAtMs });
    expect(lostB).toMatchObject({ ...lostRecord, listCostNanodollars: 4_000n, createdAtMs: startedAtMs + 7n });
    expect(published.filter((p) => p.settledByLedger && (p.requestId === finished || p.requestId === unserved))).toEqual([]);
    // Usage is exactly what the records say: 2 000 spent, 5 000 and 4 000 lost.
    expect(await l.used(key)).toBe(2_000n + 5_000n + 4_000n);
    await waitFor(async () => (await recorded(a)) && (await recorded(b)), { what: "the lost requests recorded" });
    const days = await l.db.query<{ requests: string; spend: string }>(
      "SELECT sum(requests)::text AS requests, sum(list_spend_nanodollars)::text AS spend FROM usage_days WHERE workspace_id = $1",
      [ws],
    );
    expect(days.rows[0]).toEqual({ requests: "4", spend: String(2_000n + 5_000n + 4_000n) });

    // A's own record arrives late (it was in the gateway's outbox): its cost replaces the charge.
    await publish({ requestId: a, workspaceId: ws, agent: "lease-bot", served: true, spendLeaseHoldId: lease.holdId, listCostNanodollars: 1_000n });
    await waitFor(async () => (await l.used(key)) === 2_000n + 1_000n + 4_000n, { what: "the late record's cost" });
    expect(await counter(key)).toEqual({ settled: 7_000n, reserved: 0n });
  });

  it("refuses a lease cover naming a running request without its id", async () => {
    await expect(
      l.closeHolds({ leaseCovers: [{ holdId: "hold_x", inFlightNanodollars: 1n, running: [{ requestId: "", worstCaseNanodollars: 1n, startedAtMs: 0n }] }] }),
    ).rejects.toMatchObject({ code: "invalid_request", message: "lease_covers[0].running[0].request_id: is required" });
  });

  it("charges an unrenewed lease the worst case of the requests it last reported running", async () => {
    const key = keyCeiling();
    const lease = await l.lease({ leaseId: `lease-${randomBytes(6).toString("hex")}`, orgId: "org_a", ceilings: [key], wantNanodollars: 100_000n });
    await l.closeHolds({ leaseCovers: [{ holdId: lease.holdId, inFlightNanodollars: 15_000n, spentNanodollars: 0n }] });
    l.clock.advance(TTL_MS);

    await waitFor(async () => (await holdState(lease.holdId)) === "expired", { what: "the lease expired" });
    // A gateway of the previous release names no request: the charge alone is recorded.
    expect(await l.used(key)).toBe(15_000n);
  });
});
