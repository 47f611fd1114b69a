import { randomBytes } from "node:crypto";
import { DomainError } from "@router/errors";
import type { Clock, Nanodollars } from "@router/money";
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
import type { CounterTotals, HoldStore, NewHold } from "./store";

export interface AdmitInput {
  requestId: string;
  orgId: string;
  ceilings: CeilingRule[];
  worstCase: Nanodollars;
  isByok: boolean;
  dryRun: boolean;
}

export interface CeilingRefusal {
  scope: string;
  subjectId: string;
  message: string;
}

export type Admission =
  /** `holdId` is empty for a dry run or when no ceiling counts the request. */
  | { admitted: true; holdId: string; warning: string }
  | { admitted: false; refusal: CeilingRefusal };

export interface AdmissionDeps {
  store: HoldStore;
  admissions: CounterAdmissions;
  clock: Clock;
  holdTtlMs: number;
}

/**
 * Checks the request against every ceiling that counts it and, unless it is a dry run, reserves its
 * worst case on all of them at once. A hard ceiling refuses when its usage (settled + reserved) is
 * already at or past the limit; a soft one never refuses and warns instead.
 */
export async function admit(input: AdmitInput, deps: AdmissionDeps): Promise<Admission> {
  const now = deps.clock.now();
  const ceilings = strictestPerCounter(input.ceilings.filter((c) => countsRequest(c, input.isByok))).map((c) =>
    inWindowAt(c, now),
  );
  if (ceilings.length === 0) return { admitted: true, holdId: "", warning: "" };

  // Usage never drops below zero, so a hard limit of zero or less is reached before any spend.
  const exhausted = ceilings.find((c) => c.hard && c.limit <= 0n);
  if (exhausted) return refuse(exhausted);

  if (input.dryRun) {
    const totals = await deps.store.totals(ceilings);
    const usedBefore = (c: WindowedCeiling) => used(totals.get(counterKey(c)));
    const refusing = ceilings.find((c) => c.hard && usedBefore(c) >= c.limit);
    if (refusing) return refuse(refusing);
    return { admitted: true, holdId: "", warning: softWarning(ceilings, usedBefore) };
  }

  const hold: NewHold = {
    holdId: `hold_${randomBytes(16).toString("base64url")}`,
    requestId: input.requestId,
    orgId: input.orgId,
    worstCase: input.worstCase,
    isByok: input.isByok,
    createdAt: now,
    expiresAt: new Date(now.getTime() + deps.holdTtlMs),
  };
  // The common case, one counting ceiling, is one statement per batch of requests for that row
  // (the hot row is locked the shortest); several ceilings are reserved all or none in a transaction.
  const [only] = ceilings;
  const reservation =
    only && ceilings.length === 1
      ? await deps.admissions.reserve({ hold, ceiling: only, warning: only.hard ? "" : limitReachedSentence(only) })
      : await deps.store.reserve(hold, [...ceilings].sort(lockOrder));
  switch (reservation.kind) {
    case "existing":
      if (reservation.hold.orgId !== input.orgId) {
        throw new DomainError("conflict", "request_id is already in use by another organisation's request", {
          details: { field: "request_id" },
        });
      }
      return { admitted: true, holdId: reservation.hold.holdId, warning: reservation.hold.limitWarning };
    case "refused": {
      // Ceilings arrive in the caller's precedence order (key, workspace, agent, run).
      const first = ceilings.find((c) => reservation.refusedKeys.has(counterKey(c)));
      if (!first) throw new Error("a refused reservation named no ceiling");
      return refuse(first);
    }
    case "placed": {
      const usedBefore = (c: WindowedCeiling) => used(reservation.totals.get(counterKey(c))) - input.worstCase;
      const warning = softWarning(ceilings, usedBefore);
      // The one-ceiling statement stored its warning with the hold.
      if (warning && ceilings.length > 1) await deps.store.recordWarning(hold.holdId, warning);
      return { admitted: true, holdId: hold.holdId, warning };
    }
  }
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
