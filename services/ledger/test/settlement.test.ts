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

const recorded = async (id: string) =>
  (await l.db.query("SELECT 1 FROM recorded_requests WHERE request_id = $1", [id])).rowCount === 1;

const holdState = async (holdId: string) =>
  (await l.db.query<{ state: string }>("SELECT state FROM holds WHERE hold_id = $1", [holdId])).rows[0]?.state;

async function hold(ceiling: ledger.Ceiling, worstCase = W): Promise<string> {
  const res = await l.admit(admitRequest(ceiling, worstCase));
  expect(res.admitted).toBe(true);
  return res.holdId;
}

/**
 * A finished request reaches the ledger as its record on router.request.completed.v1 (the fixture
 * publishes it and waits until it is handled): a served one settles its hold, an unserved one
 * releases it.
 */
describe("settlement from a served request's record", () => {
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

  it("changes nothing when the same record arrives twice", async () => {
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

  it("records the request alone for the empty hold id of a request nothing was reserved for", async () => {
    const id = requestId();
    await l.settle({ holdId: "", requestId: id, orgId: "org_a", listCostNanodollars: 1n });
    expect(await recorded(id)).toBe(true);
  });
});

describe("records arriving together", () => {
  it("closes every hold exactly once when many are settled, settled again and released at the same moment", async () => {
    const key = keyCeiling({ limitNanodollars: 100n * W });
    const holds = await Promise.all(Array.from({ length: 30 }, () => hold(key)));

    await Promise.all([
      ...holds.map((holdId) => l.settle({ holdId, listCostNanodollars: 1_000n })),
      ...holds.slice(0, 10).map((holdId) => l.settle({ holdId, listCostNanodollars: 1_000n })),
      ...holds.slice(20).map((holdId) => l.release(holdId)),
    ]);

    expect(await l.used(key)).toBe(30n * 1_000n);
  });

  it("takes every ceiling's reservation off when holds on two ceilings are settled together", async () => {
    const key = keyCeiling({ limitNanodollars: 100n * W });
    const workspace = keyCeiling({ subjectKind: "workspace", limitNanodollars: 100n * W });
    const holds = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const res = await l.admit({ ...admitRequest(key), ceilings: [key, workspace] });
        return res.holdId;
      }),
    );

    await Promise.all(holds.map((holdId) => l.settle({ holdId, listCostNanodollars: 7n })));

    expect(await l.used(key)).toBe(70n);
    expect(await l.used(workspace)).toBe(70n);
  });

  it("settles the others when one record among them names a hold the ledger does not know", async () => {
    const key = keyCeiling();
    const [a, b] = [await hold(key), await hold(key)];
    const stranger = requestId();

    await Promise.all([
      l.settle({ holdId: a, listCostNanodollars: 5n }),
      l.settle({ holdId: "hold_nope", requestId: stranger, orgId: "org_a", listCostNanodollars: 5n }),
      l.settle({ holdId: b, listCostNanodollars: 5n }),
    ]);

    expect(await l.used(key)).toBe(10n);
    // The request is still recorded: its spend per workspace and agent does not depend on the hold.
    expect(await recorded(stranger)).toBe(true);
  });
});

describe("release from an unserved request's record", () => {
  it("takes the reservation off without settling anything", async () => {
    const key = keyCeiling();
    const holdId = await hold(key);
    await l.release(holdId);
    expect(await l.used(key)).toBe(0n);
    expect(await holdState(holdId)).toBe("released");
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
});

describe("CloseHolds", () => {
  it("settles and releases many holds in one call and names the holds it does not know", async () => {
    const key = keyCeiling();
    const [a, b, c] = [await hold(key), await hold(key), await hold(key)];

    const res = await l.closeHolds({
      settlements: [
        { holdId: a, listCostNanodollars: 700n, billedCostNanodollars: 0n },
        { holdId: "hold_never_admitted", listCostNanodollars: 1n, billedCostNanodollars: 0n },
        { holdId: b, listCostNanodollars: 300n, billedCostNanodollars: 0n },
      ],
      releases: [{ holdId: c }, { holdId: "hold_unknown_too" }],
    });

    expect(res.unknownHoldIds.sort()).toEqual(["hold_never_admitted", "hold_unknown_too"]);
    expect(await l.used(key)).toBe(1_000n);
  });

  it("changes nothing when a batch is sent again", async () => {
    const key = keyCeiling();
    const holdId = await hold(key);
    const batch = { settlements: [{ holdId, listCostNanodollars: 250n, billedCostNanodollars: 0n }] };

    await l.closeHolds(batch);
    await l.closeHolds(batch);

    expect(await l.used(key)).toBe(250n);
  });

  it("refuses the whole batch, naming the field, when one item is malformed", async () => {
    const key = keyCeiling();
    const holdId = await hold(key);

    await expect(
      l.closeHolds({
        settlements: [
          { holdId, listCostNanodollars: 5n, billedCostNanodollars: 0n },
          { holdId, listCostNanodollars: -1n, billedCostNanodollars: 0n },
        ],
      }),
    ).rejects.toMatchObject({ code: "invalid_request", message: "settlements[1].list_cost_nanodollars: must not be negative" });
    await expect(l.closeHolds({ releases: [{ holdId: "" }] })).rejects.toMatchObject({
      code: "invalid_request",
      message: "releases[0].hold_id: is required",
    });

    expect(await l.used(key)).toBe(W);
  });
});
