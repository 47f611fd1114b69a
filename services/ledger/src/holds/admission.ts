import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
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
import type { OpenTurns } from "../runs/open-turns";

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
  /**
   * With `runId`: the spend lease that admitted the turn on its key ceiling and budgets ('' for
   * none). The turn is then reserved on the run alone.
   */
  leaseHoldId?: string;
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
  | {
      admitted: false;
      refusal: CeilingRefusal;
      /** The hard counter rows that were at or past their limits (none for a run's own refusal). */
      refusedRows?: WindowedCeiling[];
    };

export interface AdmissionDeps {
  db: Db;
  store: HoldStore;
  admissions: CounterAdmissions;
  /** Takes the common leased turn, several in one statement when they arrive together. */
  openTurns: OpenTurns;
  budgets: BudgetCache;
  clock: Clock;
  holdTtlMs: number;
  /**
   * How long Admit waits, at most, before refusing on counter rows that spend leases hold unspent
   * headroom of: the leases' gateways trim them within their use (about a second). 0: never waits.
   */
  leaseWaitMs: number;
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
  if (input.runId !== "") return waitingOnLeases(() => admitTurn(input, ceilings, now, deps), deps);
  if (input.dryRun) return checkOnly(ceilings, deps);
  if (ceilings.length === 0) return FREE;
  // Admissions on the same counter rows are decided together, one statement per batch, so a hot
  // row is locked the shortest; every row of a request is reserved all or none.
  return waitingOnLeases(() => reserve(input, ceilings, now, deps, (a) => deps.admissions.reserve(a)), deps);
}

const LEASE_POLL_MS = 100;

/**
 * Runs `attempt` until it admits, or refuses on rows that are really at their limits. A refusal on
 * rows whose usage is at the limit only because spend leases hold unspent headroom there (a budget
 * shared by keys and agents that other gateways admit from) would be wrong: it is tried again as
 * the leases are trimmed, for at most `leaseWaitMs`. The leases are recalled: their gateways
 * retire them on their next CloseHolds call (within about 50 ms while they are in use; an idle one
 * is retired after its use, about a second). Near a limit no lease is granted, so the headroom comes
 * back to Admit.
 */
async function waitingOnLeases(attempt: () => Promise<Admission>, deps: Pick<AdmissionDeps, "store" | "leaseWaitMs">): Promise<Admission> {
  const giveUpAt = performance.now() + deps.leaseWaitMs;
  let waiting = false;
  for (;;) {
    const admission = await attempt();
    if (admission.admitted || !admission.refusedRows?.length || performance.now() + LEASE_POLL_MS >= giveUpAt) return admission;
    if (!(await heldBackByLeases(admission.refusedRows, deps.store))) {
      // Leases held it back at the last reading and hold nothing now: they were trimmed between the
      // attempt and this reading, so the headroom is back. One more attempt decides.
      if (!waiting) return admission;
      waiting = false;
      continue;
    }
    waiting = true;
    await sleep(LEASE_POLL_MS);
  }
}

/**
 * Whether every one of `rows` would be under its limit without the leases' unspent headroom; if so,
 * those leases are recalled. The Admits that wait on the same rows at once share one reading: a
 * burst near a budget's limit would otherwise read the rows once per waiting request per poll.
 */
function heldBackByLeases(rows: WindowedCeiling[], store: HoldStore): Promise<boolean> {
  const key = rows.map((c) => `${counterKey(c)}\u0000${c.windowStart.getTime()}\u0000${c.limit}`).join("\u0001");
  let reading = readings.get(key);
  if (!reading) {
    reading = readHeldBack(rows, store).finally(() => setTimeout(() => readings.delete(key), LEASE_POLL_MS / 2).unref());
    readings.set(key, reading);
  }
  return reading;
}

const readings = new Map<string, Promise<boolean>>();

async function readHeldBack(rows: WindowedCeiling[], store: HoldStore): Promise<boolean> {
  const [totals, headroom] = await Promise.all([store.totals(rows), store.leaseHeadroom(rows)]);
  const heldBack = rows.every((c) => {
    const unspent = headroom.get(counterKey(c)) ?? 0n;
    return unspent > 0n && used(totals.get(counterKey(c))) - unspent < c.limit;
  });
  if (heldBack) await store.recallLeases(rows);
  return heldBack;
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
      return { ...refuse(first), refusedRows: ceilings.filter((c) => refused.has(c)) };
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

function refuse(c: WindowedCeiling): Admission & { admitted: false } {
  const refusal = { scope: c.subjectKind, subjectId: c.subjectId, message: limitReachedSentence(c) };
  return { admitted: false, refusal };
}

function softWarning(ceilings: WindowedCeiling[], usedBefore: (c: WindowedCeiling) => Nanodollars): string {
  return ceilings
    .filter((c) => !c.hard && usedBefore(c) >= c.limit)
    .map(limitReachedSentence)
    .join(" ");
}
