import { resumed, turnRefusal, type RunState } from "../src/runs/run-turns";

const USD = 1_000_000_000n;
const at = (iso: string) => new Date(`2026-11-18T${iso}Z`);

function run(overrides: Partial<RunState> = {}): RunState {
  return {
    status: "open",
    budget: 10n * USD,
    spent: 0n,
    reserved: 0n,
    maxTurns: null,
    turnsUsed: 0,
    maxToolCalls: null,
    toolCallsUsed: 0,
    maxCostPerMinute: null,
    maxToolCallsWithoutProgress: null,
    toolCallsWithoutProgress: 0,
    minuteStart: null,
    minuteSpent: 0n,
    pauseReason: null,
    pausedAt: null,
    ...overrides,
  };
}

describe("turn admission on a run", () => {
  it.each<[string, Partial<RunState>, number, string]>([
    ["a budget reached by spend and reservations", { spent: 6n * USD, reserved: 4n * USD }, 403, "reached its budget of $10.00"],
    ["the turn limit", { maxTurns: 3, turnsUsed: 3 }, 403, "all 3 of its turns"],
    ["the tool-call limit", { maxToolCalls: 5, toolCallsUsed: 7 }, 403, "all 5 of its tool calls"],
    ["a paused run", { status: "paused", pauseReason: "no_progress" }, 409, "This run is paused"],
    ["an exhausted run", { status: "exhausted" }, 409, "This run is exhausted"],
    ["a completed run", { status: "completed" }, 409, "This run is completed"],
  ])("refuses a turn at %s", (_what, state, status, sentence) => {
    const refusal = turnRefusal(run(state));
    expect(refusal?.httpStatus).toBe(status);
    expect(refusal?.message).toContain(sentence);
  });

  it("admits below every limit", () => {
    expect(turnRefusal(run({ spent: 9n * USD, maxTurns: 3, turnsUsed: 2, maxToolCalls: 5, toolCallsUsed: 4 }))).toBeNull();
  });
});

describe("resuming a run", () => {
  it("resumes by clearing only the detector counters", () => {
    const paused = run({ status: "paused", pauseReason: "cost_velocity", pausedAt: at("10:00:00"), spent: USD, turnsUsed: 4, toolCallsUsed: 6, toolCallsWithoutProgress: 3, minuteStart: at("10:00:00"), minuteSpent: USD });
    expect(resumed(paused)).toEqual({ ...paused, status: "open", pauseReason: null, pausedAt: null, toolCallsWithoutProgress: 0, minuteStart: null, minuteSpent: 0n });
  });
});
