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
  // The workspace's and the agent's budgets are reserved on too. A lease's unspent share of a budget
  // shared with other keys and agents never makes Admit refuse them: Admit waits for leases to be
  // trimmed instead (src/holds/admission.ts, `leaseWaitMs`).
  const budgets = (await deps.budgets.get(input.orgId)).of(input.workspaceId, input.agent);
  // A gateway asks with no key ceiling when it knew of a budget; one removed since counts nothing.
  if (input.ceilings.length === 0 && !budgets.some((b) => countsRequest(b, input.isByok))) return NOT_GRANTED;
  const ceilings = countingCeilings(input, budgets).map((c) => inWindowAt(c, now));
  const lease: NewLease = {
    holdId: `hold_${randomBytes(16).toString("base64url")}`,
    leaseId: input.leaseId,
    orgId: input.orgId,
    workspaceId: input.workspaceId,
    agent: input.agent,
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

/**
 * The ceilings a lease reserves on, one per counter row: every key ceiling and budget that counts
 * the requests. A key ceiling must be hard: a soft one has no headroom to share out, and its
 * requests go through Admit, which gives the warning past the limit. A soft budget is sized as if
 * it were hard, so no request admitted from the lease takes it to its limit: the warning is then
 * never due, and near the limit no lease is granted and Admit warns.
 */
function countingCeilings(input: LeaseInput, budgets: CeilingRule[]): CeilingRule[] {
  const keyCeilings = input.ceilings.filter((c) => countsRequest(c, input.isByok));
  const soft = keyCeilings.find((c) => !c.hard);
  if (soft) throw invalid(`ceilings[${input.ceilings.indexOf(soft)}].mode`, "a lease is for hard ceilings only");
  const ceilings = strictestPerCounter([...keyCeilings, ...budgets.filter((b) => countsRequest(b, input.isByok))]);
  if (ceilings.length === 0) throw invalid("ceilings", "no ceiling or budget counts these requests");
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
