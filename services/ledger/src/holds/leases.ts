import { randomBytes } from "node:crypto";
import { DomainError, invalid } from "@router/errors";
import type { BudgetCache } from "../budgets/budget-cache";
import { windowAt, type Clock, type Nanodollars } from "@router/money";
import {
  counterKey,
  countsRequest,
  inWindowAt,
  lockOrder,
  strictestPerCounter,
  type CeilingRule,
  type WindowedCeiling,
} from "./ceilings";
import type { CounterTotals, ExistingLease, HoldStore, NewLease } from "./store";

export interface LeaseInput {
  /** Chosen by the gateway; the lease's hold has it as its request id. */
  leaseId: string;
  orgId: string;
  /** The requests' workspace and agent ('' for none). */
  workspaceId: string;
  agent: string;
  ceilings: CeilingRule[];
  isByok: boolean;
  want: Nanodollars;
  /** Less than this is not worth a lease (at least one nanodollar is always required). */
  min: Nanodollars;
}

export type Lease =
  | {
      granted: true;
      holdId: string;
      amount: Nanodollars;
      expiresAt: Date;
      /** The earliest end of the lease's windows; null when every ceiling is lifetime. */
      windowEnd: Date | null;
    }
  | { granted: false };

export interface LeaseDeps {
  store: HoldStore;
  budgets: BudgetCache;
  clock: Clock;
  leaseTtlMs: number;
  /** A lease takes at most 1/leaseShare of a ceiling's headroom (an integer, at least 1). */
  leaseShare: number;
}

const NOT_GRANTED: Lease = { granted: false };

/**
 * Reserves a share of the headroom of every hard ceiling that counts the requests, for one gateway
 * to admit them from without asking per request. A lease is sized from what is left under each limit,
 * so unlike Admit it never takes a counter past its limit; taking only a share leaves the rest to
 * other gateways and to Admit.
 */
export async function grantLease(input: LeaseInput, deps: LeaseDeps): Promise<Lease> {
  const now = deps.clock.now();
  const ceilings = countingCeilings(input).map((c) => inWindowAt(c, now));
  // Leases are for the key ceiling alone. A budget shared with other keys or agents would see the
  // lease's unspent share as used and could refuse them wrongly; so when one counts these
  // requests, Admit decides each of them.
  const budgets = (await deps.budgets.get(input.orgId)).of(input.workspaceId, input.agent);
  if (budgets.some((b) => countsRequest(b, input.isByok))) return NOT_GRANTED;
  const lease: NewLease = {
    holdId: `hold_${randomBytes(16).toString("base64url")}`,
    leaseId: input.leaseId,
    orgId: input.orgId,
    isByok: input.isByok,
    createdAt: now,
    expiresAt: new Date(now.getTime() + deps.leaseTtlMs),
  };
  const share = BigInt(deps.leaseShare);
  const reservation = await deps.store.lease(lease, [...ceilings].sort(lockOrder), (totals) =>
    leaseAmount(ceilings, totals, { want: input.want, min: input.min, share }),
  );
  switch (reservation.kind) {
    case "existing":
      return existingLease(reservation.lease, input.orgId);
    case "refused":
      return NOT_GRANTED;
    case "granted":
      return {
        granted: true,
        holdId: lease.holdId,
        amount: reservation.amount,
        expiresAt: lease.expiresAt,
        windowEnd: earliest(ceilings.map((c) => c.windowEnd)),
      };
  }
}

/**
 * The amount of a lease on ceilings whose counter rows hold `totals`: what the gateway wants, at most
 * a `share`-th of the smallest headroom; undefined when that is below `min` (or nothing).
 */
export function leaseAmount(
  ceilings: WindowedCeiling[],
  totals: Map<string, CounterTotals>,
  sizing: { want: Nanodollars; min: Nanodollars; share: bigint },
): Nanodollars | undefined {
  let amount = sizing.want;
  for (const c of ceilings) {
    // Usage never drops below zero, so a limit of zero or less has no headroom before any spend.
    if (c.limit <= 0n) return undefined;
    const t = totals.get(counterKey(c));
    const headroom = c.limit - (t ? t.settled + t.reserved : 0n);
    const share = headroom / sizing.share;
    if (share < amount) amount = share;
  }
  return amount >= sizing.min && amount >= 1n ? amount : undefined;
}

/** The ceilings a lease reserves on: every hard one that counts the requests, one per counter row. */
function countingCeilings(input: LeaseInput): CeilingRule[] {
  const ceilings = strictestPerCounter(input.ceilings.filter((c) => countsRequest(c, input.isByok)));
  if (ceilings.length === 0) throw invalid("ceilings", "no ceiling counts these requests");
  // A soft ceiling never refuses, so it has no headroom to share out; its requests go through Admit,
  // which also gives the warning past the limit.
  const soft = ceilings.find((c) => !c.hard);
  if (soft) throw invalid(`ceilings[${input.ceilings.indexOf(soft)}].mode`, "a lease is for hard ceilings only");
  return ceilings;
}

function existingLease(existing: ExistingLease, orgId: string): Lease {
  if (!existing.isLease) {
    throw new DomainError("conflict", "lease_id is already in use by a request", { details: { field: "lease_id" } });
  }
  if (existing.orgId !== orgId) {
    throw new DomainError("conflict", "lease_id is already in use by another organisation's lease", {
      details: { field: "lease_id" },
    });
  }
  return {
    granted: true,
    holdId: existing.holdId,
    amount: existing.amount,
    expiresAt: existing.expiresAt,
    // The lease belongs to the windows it was granted in, which may have ended since.
    windowEnd: earliest(existing.lines.map((l) => windowAt(l.window, l.windowStart).end)),
  };
}

function earliest(ends: Array<Date | null>): Date | null {
  let first: Date | null = null;
  for (const end of ends) if (end && (!first || end < first)) first = end;
  return first;
}
