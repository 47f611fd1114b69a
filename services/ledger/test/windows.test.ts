import { ledger } from "@router/proto";
import { keyCeiling, requestId, startTestLedger, USD, type TestLedger } from "./ledger-fixture";

const { WINDOW_DAILY, WINDOW_WEEKLY, WINDOW_MONTHLY, WINDOW_LIFETIME } = ledger.Window;

let l: TestLedger;
beforeAll(async () => {
  l = await startTestLedger({ label: "windows" });
});
afterAll(() => l.close());

const admitUsd = (ceiling: ledger.Ceiling) =>
  l.admit({ requestId: requestId(), orgId: "org_a", ceilings: [ceiling], worstCaseNanodollars: USD, isByok: true });

/** Fills the ceiling at `fullAt`, then asks again at `laterAt`. */
async function admittedAfterFilling(ceiling: ledger.Ceiling, fullAt: string, laterAt: string): Promise<boolean> {
  l.clock.set(new Date(fullAt));
  expect((await admitUsd(ceiling)).admitted).toBe(true);
  expect((await admitUsd(ceiling)).admitted).toBe(false);
  l.clock.set(new Date(laterAt));
  return (await admitUsd(ceiling)).admitted;
}

describe("ceiling windows (UTC calendar terms)", () => {
  it("starts a daily ceiling afresh at UTC midnight", async () => {
    const key = keyCeiling({ window: WINDOW_DAILY });
    expect(await admittedAfterFilling(key, "2026-11-18T00:00:00.000Z", "2026-11-18T23:59:59.999Z")).toBe(false);
    l.clock.set(new Date("2026-11-19T00:00:00.000Z"));
    expect((await admitUsd(key)).admitted).toBe(true);
  });

  it("starts a weekly ceiling afresh on Monday", async () => {
    const key = keyCeiling({ window: WINDOW_WEEKLY });
    // 2026-11-16 is a Monday; the 22nd is the Sunday of that week.
    expect(await admittedAfterFilling(key, "2026-11-16T00:00:00.000Z", "2026-11-22T23:59:59.999Z")).toBe(false);
    l.clock.set(new Date("2026-11-23T00:00:00.000Z"));
    expect((await admitUsd(key)).admitted).toBe(true);
  });

  it("starts a monthly ceiling afresh on the first of the month", async () => {
    const key = keyCeiling({ window: WINDOW_MONTHLY });
    expect(await admittedAfterFilling(key, "2026-11-01T00:00:00.000Z", "2026-11-30T23:59:59.999Z")).toBe(false);
    l.clock.set(new Date("2026-12-01T00:00:00.000Z"));
    expect((await admitUsd(key)).admitted).toBe(true);
  });

  it("never starts a lifetime ceiling afresh", async () => {
    const key = keyCeiling({ window: WINDOW_LIFETIME });
    expect(await admittedAfterFilling(key, "2026-11-18T10:00:00.000Z", "2029-03-01T00:00:00.000Z")).toBe(false);
  });
});

describe("Usage", () => {
  it("reports settled spend plus open reservations in the current window, with the window's end", async () => {
    l.clock.set(new Date("2026-11-18T10:00:00.000Z"));
    const daily = keyCeiling({ window: WINDOW_DAILY, limitNanodollars: 100n * USD });
    const weekly = { ...daily, window: WINDOW_WEEKLY };
    const monthly = { ...daily, window: WINDOW_MONTHLY };
    const lifetime = { ...daily, window: WINDOW_LIFETIME };
    const all = [daily, weekly, monthly, lifetime];
    const admitAll = () =>
      l.admit({ requestId: requestId(), orgId: "org_a", ceilings: all, worstCaseNanodollars: USD, isByok: true });
    const settled = await admitAll();
    await l.settle({ holdId: settled.holdId, listCostNanodollars: 300_000_000n });
    await admitAll();

    const usage = await l.usage(all);

    expect(usage.map((u) => [u.subjectKind, u.subjectId, u.usedNanodollars, u.windowEndsAtMs])).toEqual([
      ["key", daily.subjectId, 1_300_000_000n, BigInt(Date.parse("2026-11-19T00:00:00.000Z"))],
      ["key", daily.subjectId, 1_300_000_000n, BigInt(Date.parse("2026-11-23T00:00:00.000Z"))],
      ["key", daily.subjectId, 1_300_000_000n, BigInt(Date.parse("2026-12-01T00:00:00.000Z"))],
      ["key", daily.subjectId, 1_300_000_000n, undefined],
    ]);
  });

  it("reports the new window's usage once a window has rolled over", async () => {
    l.clock.set(new Date("2026-11-18T10:00:00.000Z"));
    const key = keyCeiling({ window: WINDOW_DAILY });
    await admitUsd(key);
    l.clock.set(new Date("2026-11-19T10:00:00.000Z"));
    expect(await l.used(key)).toBe(0n);
  });

  it("reports zero for a ceiling that excludes BYOK spend", async () => {
    const key = keyCeiling();
    await admitUsd(key);
    expect(await l.used({ ...key, includeByok: false })).toBe(0n);
  });

  it("reports zero for a subject that never spent", async () => {
    expect(await l.used(keyCeiling())).toBe(0n);
  });
});
