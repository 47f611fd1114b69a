import { waitFor } from "@router/testkit";
import { keyCeiling, requestId, startTestLedger, USD, type TestLedger } from "./ledger-fixture";

const TTL_MS = 15 * 60_000;

let l: TestLedger;
beforeAll(async () => {
  l = await startTestLedger({ label: "expiry", holdTtlMs: TTL_MS, sweepIntervalMs: 20 });
});
afterAll(() => l.close());

const admitUsd = (ceiling = keyCeiling()) =>
  l.admit({ requestId: requestId(), orgId: "org_a", ceilings: [ceiling], worstCaseNanodollars: USD, isByok: true });

const holdState = async (holdId: string) =>
  (await l.db.query<{ state: string }>("SELECT state FROM holds WHERE hold_id = $1", [holdId])).rows[0]?.state;

describe("hold expiry", () => {
  it("keeps an open hold reserved until its expiry", async () => {
    const early = await admitUsd();
    l.clock.advance(TTL_MS / 2);
    const key = keyCeiling();
    const { holdId } = await admitUsd(key);
    l.clock.advance(TTL_MS / 2);

    // Once the earlier hold is swept, a sweep has seen the later one at the same moment.
    await waitFor(async () => (await holdState(early.holdId)) === "expired", { what: "the earlier hold to expire" });
    expect(await holdState(holdId)).toBe("held");
    expect(await l.used(key)).toBe(USD);
  });

  it("charges a hold whose gateway stopped renewing it at its worst case once it has expired", async () => {
    const key = keyCeiling({ limitNanodollars: USD });
    const { holdId } = await admitUsd(key);
    expect((await admitUsd(key)).admitted).toBe(false);

    l.clock.advance(TTL_MS);

    await waitFor(async () => (await holdState(holdId)) === "expired", { what: "the hold to expire" });
    // Live gateways renew the holds of their running requests, so an expired hold's gateway is gone
    // and its request may have spent up to its worst case upstream: that moves from reserved to
    // spent (it used to be released, which let a crashed gateway's requests spend for free).
    expect(await l.used(key)).toBe(USD);
    const charged = await l.db.query<{ list_cost_nanodollars: string }>("SELECT list_cost_nanodollars FROM holds WHERE hold_id = $1", [holdId]);
    expect(BigInt(charged.rows[0]?.list_cost_nanodollars ?? -1)).toBe(USD);
    expect((await admitUsd(key)).admitted).toBe(false);
  });

  it("keeps a renewed hold past its first expiry", async () => {
    const unrenewed = await admitUsd();
    const { holdId } = await admitUsd();
    l.clock.advance(TTL_MS / 2);
    await l.closeHolds({ renewHoldIds: [holdId] });
    l.clock.advance(TTL_MS / 2);
    // One sweep sees both at the same moment: the one not renewed ends, the renewed one stays.
    await waitFor(async () => (await holdState(unrenewed.holdId)) === "expired", { what: "the unrenewed hold to expire" });
    expect(await holdState(holdId)).toBe("held");
  });

  it("still counts the actual cost when an expired hold is settled late", async () => {
    const key = keyCeiling();
    const { holdId } = await admitUsd(key);
    l.clock.advance(TTL_MS);
    await waitFor(async () => (await holdState(holdId)) === "expired", { what: "the hold to expire" });

    await l.settle({ holdId, listCostNanodollars: 42n });

    expect(await holdState(holdId)).toBe("settled");
    expect(await l.used(key)).toBe(42n);
  });
});
