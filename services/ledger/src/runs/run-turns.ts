import { formatUsd } from "../holds/sentences";
import { nextStatus, type RunEvent, type RunStatus } from "./run-states";

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

/** How one turn ended, as the gateway reports it with the request's Settle or Release. */
export interface TurnOutcome {
  /** False for a failed turn: its money comes back, its turn does not. */
  served: boolean;
  cost: bigint;
  finishReason: string;
  toolCalls: number;
}

/**
 * A turn's settlement on its run: the turn's reservation comes off; a served turn's cost is spent
 * and counted in the current one-minute window, and its tool calls are counted (consecutive ones
 * without an answering turn too, reset by any turn finishing other than with `tool_calls`). Then
 * the run is exhausted when its spend reached the budget, else paused when a detector passed its
 * limit, when the state table allows it (only an open run moves).
 */
export function settleTurn(run: RunState, turnReserved: bigint, outcome: TurnOutcome, now: Date): RunState {
  const next: RunState = { ...run, reserved: maxBig(run.reserved - turnReserved, 0n) };
  if (!outcome.served) return next;
  next.spent += outcome.cost;
  next.toolCallsUsed += outcome.toolCalls;
  const minute = minuteOf(now);
  if (next.minuteStart?.getTime() !== minute.getTime()) {
    next.minuteStart = minute;
    next.minuteSpent = 0n;
  }
  next.minuteSpent += outcome.cost;
  next.toolCallsWithoutProgress = outcome.finishReason === "tool_calls" ? next.toolCallsWithoutProgress + outcome.toolCalls : 0;

  const [event, reason] = settlementEvent(next);
  const to = event ? nextStatus(next.status, event) : null;
  if (!to) return next;
  next.status = to;
  if (to === "paused") {
    next.pauseReason = reason;
    next.pausedAt = now;
  }
  return next;
}

function settlementEvent(run: RunState): [RunEvent | null, PauseReason | null] {
  if (run.spent >= run.budget) return ["exhaust", null];
  if (run.maxCostPerMinute !== null && run.minuteSpent > run.maxCostPerMinute) return ["pause", "cost_velocity"];
  if (run.maxToolCallsWithoutProgress !== null && run.toolCallsWithoutProgress > run.maxToolCallsWithoutProgress) {
    return ["pause", "no_progress"];
  }
  return [null, null];
}

/** Resuming clears only what the detectors count; budget, turn and tool-call counts stay. */
export function resumed(run: RunState): RunState {
  return { ...run, status: "open", pauseReason: null, pausedAt: null, toolCallsWithoutProgress: 0, minuteStart: null, minuteSpent: 0n };
}


/** The start of the UTC minute containing `t`: the cost-velocity window is tumbling, not sliding. */
export function minuteOf(t: Date): Date {
  return new Date(Math.floor(t.getTime() / 60_000) * 60_000);
}

function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
