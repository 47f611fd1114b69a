import { DomainError } from "@router/errors";
import type { WindowKind } from "@router/money";
import { checkNarrowerIsSmaller, parseInterval, type BudgetCap } from "../src/budgets/budget-rules";
import { USD } from "./ledger-fixture";

const cap = (window: WindowKind, usd: bigint): BudgetCap => ({ window, limit: usd * USD });

function refusal(next: BudgetCap, others: BudgetCap[]): string | null {
  try {
    checkNarrowerIsSmaller(next, others);
    return null;
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    expect(err.status).toBe(400);
    expect(err.details).toEqual({ field: "limit_usd" });
    return err.message;
  }
}

describe("a narrower window needs a smaller cap", () => {
  it.each<[string, BudgetCap, BudgetCap[], string | null]>([
    ["the first budget of a subject", cap("daily", 5n), [], null],
    ["daily below weekly", cap("daily", 5n), [cap("weekly", 20n)], null],
    ["daily equal to weekly", cap("daily", 20n), [cap("weekly", 20n)], "limit_usd: a daily budget must be smaller than the weekly budget of $20.00"],
    ["daily above weekly", cap("daily", 30n), [cap("weekly", 20n)], "limit_usd: a daily budget must be smaller than the weekly budget of $20.00"],
    ["daily above lifetime with no week between", cap("daily", 30n), [cap("lifetime", 10n)], "limit_usd: a daily budget must be smaller than the lifetime budget of $10.00"],
    ["monthly above weekly and below lifetime", cap("monthly", 50n), [cap("weekly", 20n), cap("lifetime", 100n)], null],
    ["monthly at or below weekly", cap("monthly", 20n), [cap("weekly", 20n)], "limit_usd: a monthly budget must be larger than the weekly budget of $20.00"],
    ["lifetime below monthly", cap("lifetime", 40n), [cap("daily", 1n), cap("monthly", 50n)], "limit_usd: a lifetime budget must be larger than the monthly budget of $50.00"],
    ["replacing the same window ignores its old cap", cap("weekly", 1n), [cap("weekly", 20n), cap("daily", 0n)], null],
    ["a zero daily cap under any weekly one", cap("daily", 0n), [cap("weekly", 1n)], null],
  ])("%s", (_label, next, others, expected) => {
    expect(refusal(next, others)).toBe(expected);
  });
});

describe("the interval path parameter", () => {
  it.each(["daily", "weekly", "monthly", "lifetime"])("takes %s", (raw) => {
    expect(parseInterval(raw)).toBe(raw);
  });

  it.each(["hourly", "Daily", "", undefined, 3])("refuses %p with a 400 naming interval", (raw) => {
    expect(() => parseInterval(raw)).toThrow(expect.objectContaining({ status: 400, details: { field: "interval" } }) as Error);
  });
});
