import { DomainError, invalid } from "@router/errors";
import type { Queryable } from "@router/db";
import { checkOnly, reserve, type Admission, type AdmissionDeps, type AdmitInput } from "../holds/admission";
import { counterKey, type WindowedCeiling } from "../holds/ceilings";
import { findRun, findRunForLeasedTurn, findTurn, insertTurn, saveRun, takeTurnIfUnchanged, type Run } from "./run-store";
import type { HoldLine } from "../holds/store";
import { turnRefusal, type RunRefusal } from "./run-turns";

/**
 * A turn of a run: the key ceiling and the budgets are decided first (a refusal of theirs is the one
 * named), then the run, under its row lock for the whole decision, so concurrent turns of one run
 * see each other's reservations. An admitted turn reserves its worst case on the counter rows and on
 * the run together (one transaction) and counts as a turn at once: a failed turn refunds its money,
 * never its turn. A dry run checks only.
 *
 * A turn that a spend lease admitted on the key ceiling and the budgets (`leaseHoldId`) is reserved
 * on the run alone, once the lease is found to cover every one of them: the budgets' hot counter
 * rows are then not locked per turn.
 */
export async function admitTurn(input: AdmitInput, ceilings: WindowedCeiling[], now: Date, deps: AdmissionDeps): Promise<Admission> {
  if (input.leaseHoldId && !input.dryRun) return admitLeasedTurn(input, ceilings, now, deps);
  if (input.dryRun) {
    const counters = await checkOnly(ceilings, deps);
    if (!counters.admitted) return counters;
    const run = await findRun(deps.db, input.orgId, input.runId);
    if (!run) throw runNotFound();
    const refusal = turnRefusal(run);
    return refusal ? refuseRun(run, refusal) : counters;
  }
  return admitTurnLocked(input, ceilings, now, deps);
}

/** The turn decided under its run's row lock, in one transaction with its counter rows. */
function admitTurnLocked(input: AdmitInput, ceilings: WindowedCeiling[], now: Date, deps: AdmissionDeps): Promise<Admission> {
  return deps.db.tx(async (q): Promise<Admission> => {
    const run = await findRun(q, input.orgId, input.runId, true);
    if (!run) throw runNotFound();
    const existing = await findTurn(q, input.requestId);
    if (existing) return existingTurn(existing.runId, run, input, q, deps);
    const refusal = turnRefusal(run);
    if (refusal) {
      const counters = await checkOnly(ceilings, deps, q);
      return counters.admitted ? refuseRun(run, refusal) : counters;
    }
    const onCounters = input.leaseHoldId ? await leaseCovered(q, input, ceilings, deps) : ceilings;
    const counters =
      onCounters.length === 0
        ? { admitted: true as const, holdId: "", warning: "" }
        : await reserve(input, onCounters, now, deps, (a) => deps.store.reserveIn(q, a));
    if (!counters.admitted) return counters;
    const taken: Run = { ...run, reserved: run.reserved + input.worstCase, turnsUsed: run.turnsUsed + 1 };
    await saveRun(q, taken, now);
    await insertTurn(q, {
      runId: run.id,
      requestId: input.requestId,
      turn: taken.turnsUsed,
      reserved: input.worstCase,
      admittedAt: now,
      expiresAt: new Date(now.getTime() + deps.holdTtlMs),
    });
    return counters;
  });
}

/** How often a leased turn decides again when its run changed between the read and the write. */
const LEASED_TURN_ATTEMPTS = 3;

/**
 * A turn whose key ceiling and budgets a spend lease admitted: only the run decides, so it takes no
 * lock and no transaction. With a lease read before, one statement takes the turn of an open run
 * short of its limits. Otherwise one read (the run, the lease's rows, a turn already admitted for
 * the request), the decision here, one write that takes the turn only if the run is still as read.
 * Turns of one run rarely race (an agent's loop sends them one after another); a run that changed
 * in between is read again, and after a few tries the locked path decides.
 */
async function admitLeasedTurn(input: AdmitInput, ceilings: WindowedCeiling[], now: Date, deps: AdmissionDeps): Promise<Admission> {
  const leaseHoldId = input.leaseHoldId ?? "";
  const turn = { requestId: input.requestId, reserved: input.worstCase, admittedAt: now, expiresAt: new Date(now.getTime() + deps.holdTtlMs) };
  // A lease this replica granted or read before is known to cover the turn's limits (its lines
  // never change): the common case is then one statement. Anything else (a lease not seen yet, a
  // run not open or at a limit, a retried request) is read and decided below. Turns that arrive
  // together are taken together (OpenTurns).
  const known = deps.store.leaseLinesSeen(leaseHoldId);
  if (known && coversAll(known, ceilings) && (await deps.openTurns.take({ ...turn, orgId: input.orgId, runId: input.runId, leaseHoldId }))) {
    return { admitted: true, holdId: "", warning: "" };
  }
  for (let attempt = 0; attempt < LEASED_TURN_ATTEMPTS; attempt++) {
    const seen = await findRunForLeasedTurn(deps.db, { ...input, leaseHoldId });
    if (!seen.run) throw runNotFound();
    if (seen.existingTurnRunId !== undefined) return existingTurn(seen.existingTurnRunId, seen.run, input, deps.db, deps);
    checkLeaseCovers(seen.leaseLines, ceilings);
    if (seen.leaseLines) deps.store.rememberLeaseLines(leaseHoldId, seen.leaseLines);
    const refusal = turnRefusal(seen.run);
    if (refusal) return refuseRun(seen.run, refusal);
    const taken = await takeTurnIfUnchanged(deps.db, seen.run, turn);
    if (taken) return { admitted: true, holdId: "", warning: "" };
  }
  return admitTurnLocked(input, ceilings, now, deps);
}

/** The request is already a turn: of this run, it is admitted again (same hold); of another, a conflict. */
async function existingTurn(turnRunId: string, run: Run, input: AdmitInput, q: Queryable, deps: AdmissionDeps): Promise<Admission> {
  if (turnRunId !== run.id) {
    throw new DomainError("conflict", "request_id is already a turn of another run", { details: { field: "request_id" } });
  }
  return { admitted: true, holdId: await deps.store.holdIdOf(q, input.requestId), warning: "" };
}

/** No counter row left to reserve on: the lease covers them all; otherwise a 400 naming the lease. */
async function leaseCovered(q: Queryable, input: AdmitInput, ceilings: WindowedCeiling[], deps: AdmissionDeps): Promise<WindowedCeiling[]> {
  checkLeaseCovers(await deps.store.openLeaseLines(q, input.leaseHoldId ?? "", input.orgId), ceilings);
  return [];
}

function checkLeaseCovers(lines: HoldLine[] | undefined, ceilings: WindowedCeiling[]): void {
  if (!lines) throw invalid("lease_hold_id", "no open spend lease of this organisation has this id");
  const missing = uncovered(lines, ceilings);
  if (missing) throw invalid("lease_hold_id", `the lease does not cover the turn's ${missing.subjectKind} limit`);
}

function coversAll(lines: HoldLine[], ceilings: WindowedCeiling[]): boolean {
  return uncovered(lines, ceilings) === undefined;
}

/** The first of `ceilings` (subject and window) that none of the lease's lines reserves on. */
function uncovered(lines: HoldLine[], ceilings: WindowedCeiling[]): WindowedCeiling | undefined {
  const covered = coveredRowsOf(lines);
  return ceilings.find((c) => !covered.has(rowKey(c)));
}

const rowKey = (c: { subjectKind: string; subjectId: string; window: WindowedCeiling["window"]; windowStart: Date }): string =>
  `${counterKey(c)}\u0000${c.windowStart.getTime()}`;

/** The rows a lease's lines cover, made once per lease seen (its lines never change; see leaseLinesSeen). */
function coveredRowsOf(lines: HoldLine[]): Set<string> {
  let covered = coveredRows.get(lines);
  if (!covered) {
    covered = new Set(lines.map(rowKey));
    coveredRows.set(lines, covered);
  }
  return covered;
}

const coveredRows = new WeakMap<HoldLine[], Set<string>>();

function runNotFound(): DomainError {
  return new DomainError("not_found", "run_id: no such run in this organisation", { details: { field: "run_id" } });
}

function refuseRun(run: Run, r: RunRefusal): Admission {
  return {
    admitted: false,
    refusal: { scope: "run", subjectId: run.id, message: r.message, httpStatus: r.httpStatus, code: r.code, runStatus: r.runStatus },
  };
}

