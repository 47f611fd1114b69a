import { invalid } from "@router/errors";
import { ledger } from "@router/management-api";
import { WINDOW_KINDS, type Nanodollars, type WindowKind } from "@router/money";
import { formatUsd } from "../holds/sentences";

/** A budget's window and cap, as the narrower-is-smaller rule compares them. */
export interface BudgetCap {
  window: WindowKind;
  limit: Nanodollars;
}

/** An agent name: 1 to 64 letters, digits, `.`, `_`, `:` or `-`, starting with a letter or digit. */
export const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
/** The gateway's workspace ids. */
export const WORKSPACE_ID = ledger.WORKSPACE_ID;
// A bigint column holds about 9.2e9 USD in nanodollars; a billion leaves room for spend past it
// (the same bound as a key's limit).
export const MAX_BUDGET_USD = ledger.MAX_BUDGET_USD;

// Narrowest first: daily, weekly, monthly, lifetime.
const WIDTH: Record<WindowKind, number> = { daily: 0, weekly: 1, monthly: 2, lifetime: 3 };

/** The `interval` path parameter; anything else is a 400 naming it. */
export function parseInterval(raw: unknown): WindowKind {
  const found = WINDOW_KINDS.find((w) => w === raw);
  if (!found) throw invalid("interval", `expected one of ${WINDOW_KINDS.join(", ")}`);
  return found;
}

/**
 * Each window of one subject is its own cap (never summed), and a narrower window must have a
 * smaller cap than every wider one: a daily budget at or above the weekly one is refused, as is a
 * monthly one at or below the weekly one. `others` are the subject's budgets in other windows.
 * Refuses with a 400 naming `limit_usd`.
 */
export function checkNarrowerIsSmaller(next: BudgetCap, others: BudgetCap[]): void {
  for (const other of others) {
    if (other.window === next.window) continue;
    const narrower = WIDTH[next.window] < WIDTH[other.window];
    if (narrower && next.limit >= other.limit) {
      throw invalid(
        "limit_usd",
        `a ${next.window} budget must be smaller than the ${other.window} budget of ${formatUsd(other.limit)}`,
      );
    }
    if (!narrower && next.limit <= other.limit) {
      throw invalid(
        "limit_usd",
        `a ${next.window} budget must be larger than the ${other.window} budget of ${formatUsd(other.limit)}`,
      );
    }
  }
}

/** Widest first: the order a subject's budgets are checked in, so a refusal names the one that frees last. */
export function widestFirst<T extends { window: WindowKind }>(budgets: T[]): T[] {
  return [...budgets].sort((a, b) => WIDTH[b.window] - WIDTH[a.window]);
}

/** Narrowest first, as budgets are listed. */
export function narrowestFirst<T extends { window: WindowKind }>(budgets: T[]): T[] {
  return [...budgets].sort((a, b) => WIDTH[a.window] - WIDTH[b.window]);
}
