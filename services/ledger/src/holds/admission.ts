import { randomBytes } from "node:crypto";
import type { Db, Queryable } from "@router/db";
import { DomainError } from "@router/errors";
import type { Clock, Nanodollars } from "@router/money";
import type { BudgetCache } from "../budgets/budget-cache";
import {
  counterKey,
  countsRequest,
  inWindowAt,
  lockOrder,
  strictestPerCounter,
  type CeilingRule,
  type WindowedCeiling,
} from "./ceilings";
import type { CounterAdmissions } from "./counter-admissions";
import { limitReachedSentence } from "./sentences";
import type { CounterAdmission, CounterTotals, HoldStore, NewHold, Reservation } from "./store";
import { admitTurn } from "../runs/run-admission";

export interface AdmitInput {
  requestId: string;
  orgId: string;
  /** The calling key's workspace and the agent named ('' for none): their budgets count too. */
  workspaceId: string;
  agent: string;
  /** The ceilings the caller sends (a key's), in precedence order. */
  ceilings: CeilingRule[];
  worstCase: Nanodollars;
  isByok: boolean;
  dryRun: boolean;
  /** The run the request is a turn of ('' for none). */
  runId: string;
}

export interface CeilingRefusal {
  scope: string;
  subjectId: string;
  message: string;
  /** Unset: 403 `budget_exceeded`. A run that takes no turn is a 409 `conflict` naming its status. */
  httpStatus?: number;
  code?: string;
  runStatus?: string;
}

export type Admission =
  /** `holdId` is empty for a dry run or when no ceiling counts the request. */
  | { admitted: true; holdId: string; warning: string }
  | { admitted: false; refusal: CeilingRefusal };

export interface AdmissionDeps {
  db: Db;
  store: HoldStore;
  admissions: CounterAdmissions;
  budgets: BudgetCache;
  clock: Clock;
  holdTtlMs: number;
}

/**
 * One decision for every limit that counts the request: the caller's key ceiling, then the budgets
 * of its workspace and of its agent (organisation-wide, then workspace-scoped), then the run it is a
 * turn of. A hard one refuses when its usage (settled + reserved) is already at or past the limit,
 * and the first refusing one in that order is named; a soft one never refuses and warns instead.
 * Unless it is a dry run, the worst case is reserved on all of them at once (all or none).
 */
export async function admit(input: AdmitInput, deps: AdmissionDeps): Promise<Admission> {
  const now = deps.clock.now();
  const budgets = await deps.budgets.get(input.orgId);
  const ceilings = countingCeilings([...input.ceilings, ...budgets.of(input.workspaceId, input.agent)], input.isByok, now);
  // Only a turn of a run pays for the run's checks: every other request goes on as before.
  if (input.runId !== "") return admitTurn(input, ceilings, now, deps);
  if (input.dryRun) return checkOnly(ceilings, deps);
  if (ceilings.length === 0) return FREE;
  // Admissions on the same counter rows are decided together, one statement per batch, so a hot
  // row is locked the shortest; every row of a request is reserved all or none.
  return reserve(input, ceilings, now, deps, (a) => deps.admissions.reserve(a));
}

const FREE: Admission = { admitted: true, holdId: "", warning: "" };

/**
 * The decision without a reservation (a dry run): read against the counters' current totals,
 * through `q` inside a transaction.
 */
export async function checkOnly(ceilings: WindowedCeiling[], deps: Pick<AdmissionDeps, "store">, q?: Queryable): Promise<Admission> {
  if (ceilings.length === 0) return FREE;
  const exhausted = exhaustedCeiling(ceilings);
  if (exhausted) return refuse(exhausted);
  const totals = await deps.store.totals(ceilings, q);
  const usedBefore = (c: WindowedCeiling) => used(totals.get(counterKey(c)));
  const refusing = ceilings.find((c) => c.hard && usedBefore(c) >= c.limit);
  if (refusing) return refuse(refusing);
  return { admitted: true, holdId: "", warning: softWarning(ceilings, usedBefore) };
}

/**
 * Reserves the worst case on every counter row of `ceilings` (at least one) through `place`, or
 * names the first hard one in precedence order that is at or past its limit.
 */
export async function reserve(
  input: AdmitInput,
  ceilings: WindowedCeiling[],
  now: Date,
  deps: Pick<AdmissionDeps, "holdTtlMs">,
  place: (admission: CounterAdmission) => Promise<Reservation>,
): Promise<Admission> {
  const exhausted = exhaustedCeiling(ceilings);
  if (exhausted) return refuse(exhausted);
  const hold: NewHold = {
    holdId: `hold_${randomBytes(16).toString("base64url")}`,
    requestId: input.requestId,
    orgId: input.orgId,
    workspaceId: input.workspaceId,
    agent: input.agent,
    worstCase: input.worstCase,
    isByok: input.isByok,
    createdAt: now,
    expiresAt: new Date(now.getTime() + deps.holdTtlMs),
  };
  const rows = [...ceilings].sort(lockOrder);
  const reservation = await place({
    hold,
    ceilings: rows,
    warnings: rows.map((c) => (c.hard ? "" : limitReachedSentence(c))),
    warningOrder: ceilings.map((c) => rows.indexOf(c)),
  });
  switch (reservation.kind) {
    case "existing":
      if (reservation.hold.orgId !== input.orgId) {
        throw new DomainError("conflict", "request_id is already in use by another organisation's request", {
          details: { field: "request_id" },
        });
      }
      return { admitted: true, holdId: reservation.hold.holdId, warning: reservation.hold.limitWarning };
    case "refused": {
      const refused = new Set(reservation.refused.map((j) => rows[j]));
      const first = ceilings.find((c) => refused.has(c));
      if (!first) throw new Error("a refused reservation named no ceiling");
      return refuse(first);
    }
    case "placed":
      return { admitted: true, holdId: hold.holdId, warning: reservation.warning };
  }
}

/** Usage never drops below zero, so a hard limit of zero or less is reached before any spend. */
function exhaustedCeiling(ceilings: WindowedCeiling[]): WindowedCeiling | undefined {
  return ceilings.find((c) => c.hard && c.limit <= 0n);
}

/**
 * The ceilings that count a request, one per counter row, placed in their current windows, in the
 * order given (precedence). A ceiling that excludes BYOK spend does not count a BYOK request.
 */
export function countingCeilings(ceilings: CeilingRule[], isByok: boolean, now: Date): WindowedCeiling[] {
  return strictestPerCounter(ceilings.filter((c) => countsRequest(c, isByok))).map((c) => inWindowAt(c, now));
}

function used(t: CounterTotals | undefined): Nanodollars {
  return t ? t.settled + t.reserved : 0n;
}

function refuse(c: WindowedCeiling): Admission {
  const refusal = { scope: c.subjectKind, subjectId: c.subjectId, message: limitReachedSentence(c) };
  return { admitted: false, refusal };
}

function softWarning(ceilings: WindowedCeiling[], usedBefore: (c: WindowedCeiling) => Nanodollars): string {
  return ceilings
    .filter((c) => !c.hard && usedBefore(c) >= c.limit)
    .map(limitReachedSentence)
    .join(" ");
}
