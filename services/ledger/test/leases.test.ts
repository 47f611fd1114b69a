import { randomBytes } from "node:crypto";
import { ledger } from "@router/proto";
import { waitFor } from "@router/testkit";
import { HoldStore } from "../src/holds/store";
import { keyCeiling, requestId, startTestLedger, USD, type TestLedger } from "./ledger-fixture";

const NOW = new Date("2026-11-18T10:00:00.000Z");
const LEASE_TTL_MS = 60_000;
/** The default hold TTL: a trim keeps what it keeps this long unless renewed. */
const HOLD_TTL_MS = 60_000;
const W = USD / 10n;

let l: TestLedger;
beforeAll(async () => {
  l = await startTestLedger({ label: "leases" });
});
afterAll(() => l.close());
beforeEach(() => l.clock.set(NOW));

const leaseId = (): string => `lease-${randomBytes(8).toString("hex")}`;

const leaseRequest = (ceilings: ledger.Ceiling[], extra: Partial<ledger.LeaseRequest> = {}) => ({
  leaseId: leaseId(),
  orgId: "org_a",
  ceilings,
  isByok: false,
  wantNanodollars: USD,
  minNanodollars: 0n,
  ...extra,
});

async function lease(ceiling: ledger.Ceiling, want: bigint, on: TestLedger = l): Promise<ledger.LeaseResponse> {
  const res = await on.lease(leaseRequest([ceiling], { wantNanodollars: want }));
  expect(res.granted).toBe(true);
  return res;
}

async function hold(ceiling: ledger.Ceiling, worstCase = W, on: TestLedger = l): Promise<string> {
  const res = await on.admit({
    requestId: requestId(),
    orgId: "org_a",
    ceilings: [ceiling],
    worstCaseNanodollars: worstCase,
  });
  expect(res.admitted).toBe(true);
  return res.holdId;
}

const spendRequest = (holdId: string, cost: bigint, id = requestId()) => ({
  holdId,
  requestId: id,
  listCostNanodollars: cost,
  billedCostNanodollars: cost,
});

const spend = (holdId: string, cost: bigint, id = requestId(), on: TestLedger = l) =>
  on.closeHolds({ spends: [spendRequest(holdId, cost, id)] });

interface CounterRow {
  settled: bigint;
  reserved: bigint;
}

/** The ceiling's counter row in its current window, read directly: Usage reports only the sum. */
async function counter(c: ledger.Ceiling, on: TestLedger = l): Promise<CounterRow | undefined> {
  const r = await on.db.query<{ settled_nanodollars: bigint; reserved_nanodollars: bigint }>(
    "SELECT settled_nanodollars, reserved_nanodollars FROM spend_counters WHERE subject_kind = $1 AND subject_id = $2",
    [c.subjectKind, c.subjectId],
  );
  const row = r.rows[0];
  return row && { settled: row.settled_nanodollars, reserved: row.reserved_nanodollars };
}

async function holdRow(holdId: string, on: TestLedger = l) {
  const r = await on.db.query<{ state: string; expires_at: Date; worst_case_nanodollars: bigint }>(
    "SELECT state, expires_at, worst_case_nanodollars FROM holds WHERE hold_id = $1",
    [holdId],
  );
  return r.rows[0];
}

describe("Lease", () => {
  it("grants at most a quarter of the headroom, reserves it on the counter, and Usage counts only what its gateway reports running", async () => {
    const key = keyCeiling({ limitNanodollars: USD });
    await hold(key, W);

    const res = await l.lease(leaseRequest([key], { wantNanodollars: USD }));

    const amount = (USD - W) / 4n;
    expect(res).toEqual({
      granted: true,
      holdId: expect.stringMatching(/^hold_/),
      amountNanodollars: amount,
      expiresAtMs: BigInt(NOW.getTime() + LEASE_TTL_MS),
      windowEndsAtMs: BigInt(Date.parse("2026-11-19T00:00:00.000Z")),
    });
    expect(await counter(key)).toEqual({ settled: 0n, reserved: W + amount });
    // A lease's unspent headroom is not usage (Admit still measures it, through the counter).
    expect(await l.used(key)).toBe(W);
    await l.closeHolds({ leaseCovers: [{ holdId: res.holdId, inFlightNanodollars: 3_000n, spentNanodollars: 500n }] });
    // What its requests may still cost, and what they spent that has not arrived yet.
    expect(await l.used(key)).toBe(W + 3_500n);
  });

  it("grants no more than the gateway wants", async () => {
    const key = keyCeiling({ limitNanodollars: USD });
    const res = await l.lease(leaseRequest([key], { wantNanodollars: 1_000n }));
    expect(res).toMatchObject({ granted: true, amountNanodollars: 1_000n });
    expect(await counter(key)).toEqual({ settled: 0n, reserved: 1_000n });
  });

  it("sizes the lease from the ceiling with the least headroom and reserves it on every counting ceiling", async () => {
    const key = keyCeiling({ limitNanodollars: USD });
    const workspace = keyCeiling({ subjectKind: "workspace", limitNanodollars: 4n * W });
    const byokOnly = keyCeiling({ subjectKind: "agent", limitNanodollars: 0n, includeByok: false });

    const res = await l.lease(leaseRequest([key, workspace, byokOnly], { isByok: true }));

    expect(res.amountNanodollars).toBe(W);
    expect((await counter(key))?.reserved).toBe(W);
    expect((await counter(workspace))?.reserved).toBe(W);
    expect(await counter(byokOnly)).toBeUndefined();
  });

  it("answers no window end for a lease on lifetime ceilings", async () => {
    const key = keyCeiling({ window: ledger.Window.WINDOW_LIFETIME });
    const res = await l.lease(leaseRequest([key]));
    expect(res.granted).toBe(true);
    expect(res.windowEndsAtMs).toBeUndefined();
  });

  it("grants nothing and writes nothing when a share of the headroom is below the minimum", async () => {
    const key = keyCeiling({ limitNanodollars: USD });
    const req = leaseRequest([key], { minNanodollars: USD / 4n + 1n });

    const res = await l.lease(req);

    expect(res).toEqual({
      granted: false,
      holdId: "",
      amountNanodollars: 0n,
      expiresAtMs: 0n,
      windowEndsAtMs: undefined,
    });
    expect(await counter(key)).toBeUndefined();
    const holds = await l.db.query("SELECT 1 FROM holds WHERE request_id = $1", [req.leaseId]);
    expect(holds.rowCount).toBe(0);
  });

  it("grants nothing on a hard ceiling at its limit, past it, or with a limit of zero", async () => {
    const atLimit = keyCeiling({ limitNanodollars: W });
    await hold(atLimit, W);
    const pastLimit = keyCeiling({ limitNanodollars: W });
    await l.settle({ holdId: await hold(pastLimit, W), listCostNanodollars: 2n * W });
    // Three nanodollars of headroom make a share of zero.
    const almost = keyCeiling({ limitNanodollars: W + 3n });
    await hold(almost, W);

    for (const key of [atLimit, pastLimit, almost, keyCeiling({ limitNanodollars: 0n })]) {
      expect((await l.lease(leaseRequest([key]))).granted).toBe(false);
    }
    expect(await counter(atLimit)).toEqual({ settled: 0n, reserved: W });
    expect(await counter(pastLimit)).toEqual({ settled: 2n * W, reserved: 0n });
  });

  it("answers the same lease when asked again with the same lease id, reserving once", async () => {
    const key = keyCeiling({ limitNanodollars: USD });
    const req = leaseRequest([key], { wantNanodollars: W });

    const first = await l.lease(req);
    l.clock.advance(1_000);
    const again = await l.lease(req);

    expect(again).toEqual(first);
    expect((await counter(key))?.reserved).toBe(W);
  });

  it("answers a lease asked for again with its amount after a trim", async () => {
    const key = keyCeiling({ limitNanodollars: USD });
    const req = leaseRequest([key], { wantNanodollars: W });
    const first = await l.lease(req);

    await l.trim(first.holdId, W / 2n);

    expect(await l.lease(req)).toMatchObject({ holdId: first.holdId, amountNanodollars: W / 2n });
    expect(await l.used(key)).toBe(W / 2n);
  });

  it("places one lease when the same lease id is asked for concurrently", async () => {
    const key = keyCeiling({ limitNanodollars: USD });
    const req = leaseRequest([key], { wantNanodollars: W });

    const answers = await Promise.all(Array.from({ length: 10 }, () => l.lease(req)));

    expect(new Set(answers.map((a) => a.holdId)).size).toBe(1);
    expect((await counter(key))?.reserved).toBe(W);
  });

  it("refuses a lease id already used by another organisation", async () => {
    const req = leaseRequest([keyCeiling()]);
    await l.lease(req);
    await expect(l.lease({ ...req, orgId: "org_b" })).rejects.toMatchObject({
      code: "conflict",
      details: { field: "lease_id" },
    });
  });

  it("rejects a soft ceiling, naming its mode", async () => {
    const soft = keyCeiling({ mode: ledger.LimitMode.LIMIT_MODE_SOFT });
    await expect(l.lease(leaseRequest([soft]))).rejects.toMatchObject({
      code: "invalid_request",
      message: "ceilings[0].mode: a lease is for hard ceilings only",
    });
    expect(await counter(soft)).toBeUndefined();
  });

  it("rejects a lease that no ceiling counts", async () => {
    const byokExcluded = keyCeiling({ includeByok: false });
    await expect(l.lease(leaseRequest([byokExcluded], { isByok: true }))).rejects.toMatchObject({
      code: "invalid_request",
      message: "ceilings: no ceiling or budget counts these requests",
    });
  });

  it("rejects a minimum above what is wanted, naming min_nanodollars", async () => {
    await expect(
      l.lease(leaseRequest([keyCeiling()], { wantNanodollars: W, minNanodollars: W + 1n })),
    ).rejects.toMatchObject({
      code: "invalid_request",
      message: "min_nanodollars: must be between 0 and want_nanodollars",
    });
  });

  it("rejects a lease without a positive want, naming want_nanodollars", async () => {
    await expect(l.lease(leaseRequest([keyCeiling()], { wantNanodollars: 0n }))).rejects.toMatchObject({
      code: "invalid_request",
      message: "want_nanodollars: must be positive",
    });
  });
});

describe("spends from a lease", () => {
  it("settles each spend and takes it off the lease's reservation", async () => {
    const key = keyCeiling();
    const { holdId } = await lease(key, 100_000n);

    await spend(holdId, 30_000n);

    expect(await counter(key)).toEqual({ settled: 30_000n, reserved: 70_000n });
    // The rest of the lease is headroom, not usage.
    expect(await l.used(key)).toBe(30_000n);
  });

  it("counts a spend once when its request is sent again, in the same batch or a later one", async () => {
    const key = keyCeiling();
    const { holdId } = await lease(key, 100_000n);
    const again = spendRequest(holdId, 10_000n);

    await l.closeHolds({ spends: [again, again] });
    await l.closeHolds({ spends: [again] });

    expect(await counter(key)).toEqual({ settled: 10_000n, reserved: 90_000n });
  });

  it("settles a spend that arrives after the lease was released without touching the reservation", async () => {
    const key = keyCeiling();
    await hold(key, W);
    const { holdId } = await lease(key, 100_000n);
    await l.trim(holdId);

    await spend(holdId, 40_000n);

    expect(await counter(key)).toEqual({ settled: 40_000n, reserved: W });
  });

  it("takes the reservation down only by what the lease still reserves when spends exceed it", async () => {
    const key = keyCeiling();
    await hold(key, W);
    const { holdId } = await lease(key, 100_000n);

    await spend(holdId, 100_500n);
    await spend(holdId, 100n);

    expect(await counter(key)).toEqual({ settled: 100_600n, reserved: W });
  });

  it("settles a batch of spends that alternates between two leases, then releases one, as one call at a time would", async () => {
    const key = keyCeiling();
    const a = (await lease(key, 100_000n)).holdId;
    const b = (await lease(key, 50_000n)).holdId;

    await l.closeHolds({
      spends: [
        spendRequest(a, 10_000n),
        spendRequest(a, 20_000n),
        spendRequest(b, 5_000n),
        spendRequest(a, 30_000n),
        // More than lease a still reserves (40 000): only that comes off the reservation.
        spendRequest(a, 50_000n),
      ],
      releases: [{ holdId: b, keepNanodollars: 0n }],
    });

    expect(await counter(key)).toEqual({ settled: 115_000n, reserved: 0n });
    const spent = await l.db.query<{ hold_id: string; spent_nanodollars: bigint }>(
      "SELECT hold_id, spent_nanodollars FROM holds WHERE hold_id = ANY ($1::text[])",
      [[a, b]],
    );
    expect(Object.fromEntries(spent.rows.map((r) => [r.hold_id, r.spent_nanodollars]))).toEqual({ [a]: 110_000n, [b]: 5_000n });
    expect(await holdRow(b)).toMatchObject({ state: "released" });
  });

  it("answers a spend on an unknown hold or on a hold that is not a lease as unknown, changing nothing", async () => {
    const key = keyCeiling();
    const ordinary = await hold(key, W);

    const res = await l.closeHolds({
      spends: [spendRequest("hold_never_leased", 5n), spendRequest(ordinary, 5n)],
    });

    expect(res.unknownHoldIds.sort()).toEqual(["hold_never_leased", ordinary].sort());
    expect(await counter(key)).toEqual({ settled: 0n, reserved: W });
  });
});

describe("trimming a lease", () => {
  it("keeps the part asked for and extends the expiry; a full release then leaves exactly the spends", async () => {
    const key = keyCeiling();
    const other = await hold(key, W);
    const { holdId } = await lease(key, 100_000n);
    await spend(holdId, 20_000n);
    l.clock.advance(10_000);

    await l.trim(holdId, 30_000n);

    expect(await counter(key)).toEqual({ settled: 20_000n, reserved: W + 30_000n });
    expect(await holdRow(holdId)).toMatchObject({
      state: "held",
      expires_at: new Date(NOW.getTime() + 10_000 + HOLD_TTL_MS),
    });

    await spend(holdId, 25_000n);
    await l.trim(holdId);
    await l.release(other);

    expect(await counter(key)).toEqual({ settled: 45_000n, reserved: 0n });
    expect(await l.used(key)).toBe(45_000n);
  });

  it("applies the spends of a CloseHolds call before its releases", async () => {
    const key = keyCeiling();
    const { holdId } = await lease(key, 100_000n);

    await l.closeHolds({
      releases: [{ holdId, keepNanodollars: 10_000n }],
      spends: [spendRequest(holdId, 30_000n)],
    });

    // The other way round, the trim to 10 000 would have left nothing for the spend to take off.
    expect(await counter(key)).toEqual({ settled: 30_000n, reserved: 10_000n });
  });

  it("releases nothing when the lease already reserves less than it keeps", async () => {
    const key = keyCeiling();
    const { holdId } = await lease(key, 100_000n);
    await spend(holdId, 90_000n);

    await l.trim(holdId, 50_000n);

    expect(await counter(key)).toEqual({ settled: 90_000n, reserved: 10_000n });
    expect((await holdRow(holdId))?.state).toBe("held");
  });
});

describe("lease expiry", () => {
  let e: TestLedger;
  beforeAll(async () => {
    e = await startTestLedger({
      label: "leaseexpiry",
      sweepIntervalMs: 20,
      leaseTtlMs: LEASE_TTL_MS,
      // Longer than a lease, so ordinary holds and trims outlive an untouched lease here.
      holdTtlMs: 15 * 60_000,
    });
  });
  afterAll(() => e.close());

  it("releases only what a partly spent lease still reserves", async () => {
    const key = keyCeiling();
    await hold(key, W, e);
    const { holdId } = await lease(key, 100_000n, e);
    await spend(holdId, 35_000n, requestId(), e);

    e.clock.advance(LEASE_TTL_MS);

    await waitFor(async () => (await holdRow(holdId, e))?.state === "expired", { what: "the lease to expire" });
    expect(await counter(key, e)).toEqual({ settled: 35_000n, reserved: W });
  });

  it("keeps a trimmed lease past the lease expiry, as long as a hold", async () => {
    const untrimmed = await lease(keyCeiling(), 100_000n, e);
    const key = keyCeiling();
    const trimmed = await lease(key, 100_000n, e);
    await e.trim(trimmed.holdId, 40_000n);

    e.clock.advance(LEASE_TTL_MS);

    // Once the untrimmed lease is swept, a sweep has seen the trimmed one at the same moment.
    await waitFor(async () => (await holdRow(untrimmed.holdId, e))?.state === "expired", {
      what: "the untrimmed lease to expire",
    });
    expect((await holdRow(trimmed.holdId, e))?.state).toBe("held");
    expect(await counter(key, e)).toEqual({ settled: 0n, reserved: 40_000n });
  });

  it("leaves a lease alone when a trim moved its expiry after the sweep listed it", async () => {
    const key = keyCeiling();
    const { holdId } = await lease(key, 100_000n, e);
    await e.trim(holdId, 40_000n);

    // What a sweep that listed the lease before the trim then asks for.
    const outcomes = await new HoldStore(e.db).closeMany([{ holdId, closing: { to: "expired" }, now: e.clock.now() }]);

    expect(outcomes).toEqual(["already_closed"]);
    expect((await holdRow(holdId, e))?.state).toBe("held");
    expect(await counter(key, e)).toEqual({ settled: 0n, reserved: 40_000n });
  });
});

describe("Lease under concurrency", () => {
  it("never takes a counter past its limit when 20 Leases race with Admits", async () => {
    const limit = USD;
    const key = keyCeiling({ limitNanodollars: limit });
    for (let i = 0; i < 3; i++) await hold(key, W);
    const admitRequest = () => ({ requestId: requestId(), orgId: "org_a", ceilings: [key], worstCaseNanodollars: W });

    const [leases, admits] = await Promise.all([
      Promise.all(Array.from({ length: 20 }, () => l.lease(leaseRequest([key], { wantNanodollars: limit })))),
      Promise.all(Array.from({ length: 20 }, () => l.admit(admitRequest()))),
    ]);

    const granted = leases.filter((g) => g.granted).reduce((sum, g) => sum + g.amountNanodollars, 0n);
    const admitted = BigInt(admits.filter((a) => a.admitted).length);
    expect(leases.some((g) => g.granted)).toBe(true);
    expect(granted).toBeLessThanOrEqual(limit - 3n * W);
    const c = await counter(key);
    const used = (c?.settled ?? 0n) + (c?.reserved ?? 0n);
    expect(used).toBe(granted + (3n + admitted) * W);
    // Usage leaves out the leases' headroom (their gateways reported nothing running).
    expect(await l.used(key)).toBe((3n + admitted) * W);
    // Only an Admit crosses a hard limit, and by one request at most.
    expect(used).toBeLessThanOrEqual(limit + W);
  });
});

describe("CloseHolds with spends and trims", () => {
  it("refuses the whole batch, naming the field, when a spend or a release is malformed", async () => {
    const key = keyCeiling();
    const { holdId } = await lease(key, 100_000n);

    await expect(
      l.closeHolds({ spends: [spendRequest(holdId, 5n), { ...spendRequest(holdId, 5n), requestId: "" }] }),
    ).rejects.toMatchObject({ code: "invalid_request", message: "spends[1].request_id: is required" });
    await expect(
      l.closeHolds({ spends: [spendRequest(holdId, 5n)], releases: [{ holdId, keepNanodollars: -1n }] }),
    ).rejects.toMatchObject({ code: "invalid_request", message: "releases[0].keep_nanodollars: must not be negative" });
    await expect(l.closeHolds({ spends: [spendRequest(holdId, -1n)] })).rejects.toMatchObject({
      code: "invalid_request",
      message: "spends[0].list_cost_nanodollars: must not be negative",
    });

    expect(await counter(key)).toEqual({ settled: 0n, reserved: 100_000n });
  });
});
