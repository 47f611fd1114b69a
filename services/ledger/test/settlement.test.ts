import { keyCeiling, requestId, startTestLedger, USD, type TestLedger } from "./ledger-fixture";
import type { ledger } from "@router/proto";

const W = USD / 10n;

let l: TestLedger;
beforeAll(async () => {
  l = await startTestLedger({ label: "settlement" });
});
afterAll(() => l.close());

const admitRequest = (ceiling: ledger.Ceiling, worstCase = W) => ({
  requestId: requestId(),
  orgId: "org_a",
  ceilings: [ceiling],
  worstCaseNanodollars: worstCase,
  isByok: true,
});

async function hold(ceiling: ledger.Ceiling, worstCase = W): Promise<string> {
  const res = await l.admit(admitRequest(ceiling, worstCase));
  expect(res.admitted).toBe(true);
  return res.holdId;
}

describe("Settle", () => {
  it("replaces the reservation with the actual list cost", async () => {
    const key = keyCeiling();
    const holdId = await hold(key);
    await hold(key);

    await l.settle({ holdId, listCostNanodollars: 12_345n, billedCostNanodollars: 0n });

    expect(await l.used(key)).toBe(W + 12_345n);
  });

  it("accepts an actual cost above the reservation", async () => {
    const key = keyCeiling();
    const holdId = await hold(key);
    await l.settle({ holdId, listCostNanodollars: 3n * W });
    expect(await l.used(key)).toBe(3n * W);
  });

  it("changes nothing when the same hold is settled twice", async () => {
    const key = keyCeiling();
    const holdId = await hold(key);
    await l.settle({ holdId, listCostNanodollars: 500n });
    await l.settle({ holdId, listCostNanodollars: 500n });
    expect(await l.used(key)).toBe(500n);
  });

  it("lets a ceiling refused by reservations admit again once they settle below the limit", async () => {
    const key = keyCeiling({ limitNanodollars: 2n * W });
    const a = await hold(key);
    const b = await hold(key);
    expect((await l.admit(admitRequest(key))).admitted).toBe(false);

    await l.settle({ holdId: a, listCostNanodollars: 1n });
    await l.settle({ holdId: b, listCostNanodollars: 1n });

    expect(await hold(key)).toMatch(/^hold_/);
  });

  it("answers not_found for an unknown hold", async () => {
    await expect(l.settle({ holdId: "hold_nope", listCostNanodollars: 1n })).rejects.toMatchObject({
      code: "not_found",
    });
  });

  it("does nothing for the empty hold id of a request nothing was reserved for", async () => {
    await expect(l.settle({ holdId: "", listCostNanodollars: 1n })).resolves.toEqual({});
  });

  it("rejects a negative cost", async () => {
    const holdId = await hold(keyCeiling());
    await expect(l.settle({ holdId, listCostNanodollars: -1n })).rejects.toMatchObject({ code: "invalid_request" });
  });
});

describe("Release", () => {
  it("takes the reservation off without settling anything", async () => {
    const key = keyCeiling();
    const holdId = await hold(key);
    await l.release(holdId);
    expect(await l.used(key)).toBe(0n);
  });

  it("changes nothing when released twice, or settled after release", async () => {
    const key = keyCeiling();
    await hold(key);
    const holdId = await hold(key);
    await l.release(holdId);
    await l.release(holdId);
    await l.settle({ holdId, listCostNanodollars: 7n });
    expect(await l.used(key)).toBe(W);
  });

  it("changes nothing when a settled hold is released", async () => {
    const key = keyCeiling();
    const holdId = await hold(key);
    await l.settle({ holdId, listCostNanodollars: 9n });
    await l.release(holdId);
    expect(await l.used(key)).toBe(9n);
  });

  it("answers not_found for an unknown hold", async () => {
    await expect(l.release("hold_nope")).rejects.toMatchObject({ code: "not_found" });
  });
});
