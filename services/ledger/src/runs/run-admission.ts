import { DomainError } from "@router/errors";
import { checkOnly, reserve, type Admission, type AdmissionDeps, type AdmitInput } from "../holds/admission";
import type { WindowedCeiling } from "../holds/ceilings";
import { findRun, findTurn, insertTurn, saveRun, type Run } from "./run-store";
import { turnRefusal, type RunRefusal } from "./run-turns";

/**
 * A turn of a run: the key ceiling and the budgets are decided first (a refusal of theirs is the one
 * named), then the run, under its row lock for the whole decision, so concurrent turns of one run
 * see each other's reservations. An admitted turn reserves its worst case on the counter rows and on
 * the run together (one transaction) and counts as a turn at once: a failed turn refunds its money,
 * never its turn. A dry run checks only.
 */
export async function admitTurn(input: AdmitInput, ceilings: WindowedCeiling[], now: Date, deps: AdmissionDeps): Promise<Admission> {
  if (input.dryRun) {
    const counters = await checkOnly(ceilings, deps);
    if (!counters.admitted) return counters;
    const run = await findRun(deps.db, input.orgId, input.runId);
    if (!run) throw runNotFound();
    const refusal = turnRefusal(run);
    return refusal ? refuseRun(run, refusal) : counters;
  }
  return deps.db.tx(async (q): Promise<Admission> => {
    const run = await findRun(q, input.orgId, input.runId, true);
    if (!run) throw runNotFound();
    const existing = await findTurn(q, input.requestId);
    if (existing) {
      if (existing.runId !== run.id) {
        throw new DomainError("conflict", "request_id is already a turn of another run", { details: { field: "request_id" } });
      }
      return { admitted: true, holdId: await deps.store.holdIdOf(q, input.requestId), warning: "" };
    }
    const refusal = turnRefusal(run);
    if (refusal) {
      const counters = await checkOnly(ceilings, deps, q);
      return counters.admitted ? refuseRun(run, refusal) : counters;
    }
    const counters =
      ceilings.length === 0
        ? { admitted: true as const, holdId: "", warning: "" }
        : await reserve(input, ceilings, now, deps, (a) => deps.store.reserveIn(q, a));
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

function runNotFound(): DomainError {
  return new DomainError("not_found", "run_id: no such run in this organisation", { details: { field: "run_id" } });
}

function refuseRun(run: Run, r: RunRefusal): Admission {
  return {
    admitted: false,
    refusal: { scope: "run", subjectId: run.id, message: r.message, httpStatus: r.httpStatus, code: r.code, runStatus: r.runStatus },
  };
}

