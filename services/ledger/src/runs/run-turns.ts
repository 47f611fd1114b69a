import { formatUsd } from "../holds/sentences";
import type { RunStatus } from "./run-states";

/** A run's limits and counters: what admission and settlement decide on. */
export interface RunState {
  status: RunStatus;
  budget: bigint;
  spent: bigint;
  reserved: bigint;
  maxTurns: number | null;
  turnsUsed: number;
  maxToolCalls: number | null;
  toolCallsUsed: number;
  maxCostPerMinute: bigint | null;
  maxToolCallsWithoutProgress: number | null;
  toolCallsWithoutProgress: number;
  /** The tumbling one-minute window the cost-velocity detector counts in, and its spend so far. */
  minuteStart: Date | null;
  minuteSpent: bigint;
  pauseReason: PauseReason | null;
  pausedAt: Date | null;
}

export type PauseReason = "cost_velocity" | "no_progress";

/** Why a run takes no turn now: 409 for a run that is not open, 403 for a limit reached. */
export interface RunRefusal {
  httpStatus: 403 | 409;
  code: "budget_exceeded" | "conflict";
  /** Set for a 409: the run's status, which the answer names. */
  runStatus: RunStatus | "";
  message: string;
}

/**
 * Whether a run takes one more turn: it must be open, and its budget (settled + reserved), turn
 * limit and tool-call limit must each be short of their limit. The tool-call limit is checked here
 * only, so one turn can pass it by its own calls.
 */
export function turnRefusal(run: RunState): RunRefusal | null {
  if (run.status !== "open") {
    const why = run.status === "paused" ? ` (paused for ${run.pauseReason ?? "a detector"}; resume it first)` : "";
    return { httpStatus: 409, code: "conflict", runStatus: run.status, message: `This run is ${run.status}${why}; it takes no more turns.` };
  }
  const limit = (message: string): RunRefusal => ({ httpStatus: 403, code: "budget_exceeded", runStatus: "", message });
  if (run.spent + run.reserved >= run.budget) return limit(`This run has reached its budget of ${formatUsd(run.budget)}.`);
  if (run.maxTurns !== null && run.turnsUsed >= run.maxTurns) return limit(`This run has used all ${run.maxTurns} of its turns.`);
  if (run.maxToolCalls !== null && run.toolCallsUsed >= run.maxToolCalls) {
    return limit(`This run has made all ${run.maxToolCalls} of its tool calls.`);
  }
  return null;
}

/*
 * A turn's settlement on its run (the reservation off, a served turn's cost and tool calls counted,
 * the run exhausted or paused by its detectors) is settle_run_turns in migrations/repeatable, run in
 * the statement that records the turn's request.
 */

/** Resuming clears only what the detectors count; budget, turn and tool-call counts stay. */
export function resumed(run: RunState): RunState {
  return { ...run, status: "open", pauseReason: null, pausedAt: null, toolCallsWithoutProgress: 0, minuteStart: null, minuteSpent: 0n };
}


