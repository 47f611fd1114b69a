import { fromUsd } from "@router/money";
import {
  mayFlagAgain,
  runawayKind,
  SPEC_FLOORS,
  sweepWindow,
  usualRequestsPerWindow,
  usualSpendPerWindow,
  type SubjectTotals,
} from "../src/sweep/runaway-rule";

const usd = (n: number) => fromUsd(n);
/** Totals of a subject whose usual day holds `usualPerWindow` in each of its 96 quarter-hours. */
function totals(window: { spend?: number; requests?: number }, usualPerWindow: { spend?: number; requests?: number } = {}): SubjectTotals {
  return {
    spendNanos: usd(window.spend ?? 0),
    requests: BigInt(window.requests ?? 0),
    usualSpanSpendNanos: usd(usualPerWindow.spend ?? 0) * 96n,
    usualSpanRequests: BigInt(usualPerWindow.requests ?? 0) * 96n,
  };
}

describe("the runaway rule", () => {
  test.each([
    // [what, window, usual per 15 minutes, expected]
    ["a new subject spending exactly 5 USD", { spend: 5 }, {}, "spend"],
    ["a new subject spending just under 5 USD", { spend: 4.999999999 }, {}, null],
    ["exactly 3 times its usual and at least 5 USD", { spend: 6 }, { spend: 2 }, "spend"],
    ["just under 3 times its usual", { spend: 5.999999999 }, { spend: 2 }, null],
    ["3 times its usual but under 5 USD", { spend: 3 }, { spend: 1 }, null],
    ["a steady big spender at its usual", { spend: 100 }, { spend: 100 }, null],
    ["a big spender at 3 times its usual", { spend: 300 }, { spend: 100 }, "spend"],
    ["a new subject with exactly 300 requests", { requests: 300 }, {}, "rate"],
    ["a new subject with 299 requests", { requests: 299 }, {}, null],
    ["exactly 5 times its usual count and at least 300", { requests: 500 }, { requests: 100 }, "rate"],
    ["just under 5 times its usual count", { requests: 499 }, { requests: 100 }, null],
    ["5 times its usual count but under 300", { requests: 250 }, { requests: 50 }, null],
    ["both broken: spend is reported", { spend: 10, requests: 1000 }, {}, "spend"],
    ["spend within usual but requests not", { spend: 10, requests: 1000 }, { spend: 10, requests: 10 }, "rate"],
  ] as const)("%s", (_what, window, usual, expected) => {
    expect(runawayKind(totals(window, usual), SPEC_FLOORS)).toBe(expected);
  });

  test("compares with the mean of the previous 24 hours, a quiet quarter-hour counting as zero", () => {
    // One busy hour (4 quarter-hours of 12 USD) in an otherwise quiet day: 48 USD over 96 is 0.5 USD usual.
    const window = { spendNanos: usd(5), requests: 0n, usualSpanSpendNanos: usd(48), usualSpanRequests: 0n };
    expect(usualSpendPerWindow(window.usualSpanSpendNanos)).toBe(usd(0.5));
    expect(runawayKind(window, SPEC_FLOORS)).toBe("spend");
    // The same 48 USD spread so the usual is 2 USD would need 6 USD.
    expect(runawayKind({ ...window, usualSpanSpendNanos: usd(192) }, SPEC_FLOORS)).toBeNull();
    expect(runawayKind({ ...window, spendNanos: usd(6), usualSpanSpendNanos: usd(192) }, SPEC_FLOORS)).toBe("spend");
  });

  test("reports the usual request count as a fractional mean", () => {
    expect(usualRequestsPerWindow(100n)).toBeCloseTo(100 / 96, 10);
    expect(usualRequestsPerWindow(0n)).toBe(0);
  });

  test("rounds the usual spend to the nearest nanodollar", () => {
    expect(usualSpendPerWindow(95n)).toBe(1n);
    expect(usualSpendPerWindow(47n)).toBe(0n);
    expect(usualSpendPerWindow(48n)).toBe(1n);
  });

  test("takes lowered floors when given", () => {
    const floors = { minSpendNanos: usd(0.01), minRequests: 3n };
    expect(runawayKind(totals({ requests: 3 }), floors)).toBe("rate");
    expect(runawayKind(totals({ requests: 2 }), floors)).toBeNull();
  });
});

describe("once an hour", () => {
  const now = new Date("2026-11-21T10:00:00.000Z");
  test.each([
    ["never flagged", null, true],
    ["flagged exactly an hour ago", "2026-11-21T09:00:00.000Z", true],
    ["flagged 59 minutes 59.999 seconds ago", "2026-11-21T09:00:00.001Z", false],
    ["flagged five minutes ago", "2026-11-21T09:55:00.000Z", false],
    ["flagged yesterday", "2026-11-20T10:00:00.000Z", true],
  ] as const)("%s", (_what, last, expected) => {
    expect(mayFlagAgain(last === null ? null : new Date(last), now)).toBe(expected);
  });
});

describe("the sweep's window", () => {
  test.each([
    // [sweep at, window start, usual from]
    ["on a 5-minute boundary: exactly the last 15 minutes", "2026-11-21T10:05:00.000Z", "2026-11-21T09:50:00.000Z", "2026-11-20T09:50:00.000Z"],
    ["just after a boundary", "2026-11-21T10:05:00.250Z", "2026-11-21T09:50:00.000Z", "2026-11-20T09:50:00.000Z"],
    ["between boundaries: the current bucket so far as well", "2026-11-21T10:08:30.000Z", "2026-11-21T09:50:00.000Z", "2026-11-20T09:50:00.000Z"],
    ["at midnight", "2026-11-22T00:00:00.000Z", "2026-11-21T23:45:00.000Z", "2026-11-20T23:45:00.000Z"],
  ] as const)("%s", (_what, at, start, usualFrom) => {
    const w = sweepWindow(new Date(at));
    expect(w.start.toISOString()).toBe(start);
    expect(w.end.toISOString()).toBe(at);
    expect(w.usualFrom.toISOString()).toBe(usualFrom);
  });
});
