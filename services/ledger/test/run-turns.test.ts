import { minuteOf, resumed, settleTurn, turnRefusal, type RunState } from "../src/runs/run-turns";

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

const served = (cost: bigint, finishReason = "stop", toolCalls = 0) => ({ served: true, cost, finishReason, toolCalls });

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

describe("turn settlement on a run", () => {
  it("moves the turn's reservation to spend", () => {
    const next = settleTurn(run({ reserved: 3n * USD }), 2n * USD, served(USD / 2n), at("10:00:00"));
    expect([next.reserved, next.spent, next.status]).toEqual([USD, USD / 2n, "open"]);
  });

  it("refunds a failed turn's money and counts nothing else", () => {
    const next = settleTurn(run({ reserved: 2n * USD, turnsUsed: 1 }), 2n * USD, { served: false, cost: 0n, finishReason: "", toolCalls: 0 }, at("10:00:00"));
    expect([next.reserved, next.spent, next.turnsUsed]).toEqual([0n, 0n, 1]);
  });

  it("exhausts the run when spend reaches the budget, before any detector", () => {
    const next = settleTurn(run({ spent: 9n * USD, maxCostPerMinute: 1n }), 0n, served(USD), at("10:00:00"));
    expect([next.status, next.pauseReason]).toEqual(["exhausted", null]);
  });

  it("pauses for cost velocity when one minute's spend passes the limit, counting per tumbling minute", () => {
    const limits = { maxCostPerMinute: USD };
    const first = settleTurn(run(limits), 0n, served(USD), at("10:00:10"));
    // Exactly at the limit is not above it; the next minute starts from zero.
    const nextMinute = settleTurn(first, 0n, served(USD), at("10:01:00"));
    const paused = settleTurn(nextMinute, 0n, served(1n), at("10:01:59"));
    expect([first.status, nextMinute.status, nextMinute.minuteSpent]).toEqual(["open", "open", USD]);
    expect([paused.status, paused.pauseReason, paused.pausedAt]).toEqual(["paused", "cost_velocity", at("10:01:59")]);
  });

  it("pauses for no progress when consecutive tool calls pass the limit; an answering turn resets them", () => {
    const limits = { maxToolCallsWithoutProgress: 2 };
    const two = settleTurn(run(limits), 0n, served(1n, "tool_calls", 2), at("10:00:00"));
    const answered = settleTurn(two, 0n, served(1n, "stop"), at("10:00:01"));
    const again = settleTurn(settleTurn(answered, 0n, served(1n, "tool_calls", 2), at("10:00:02")), 0n, served(1n, "tool_calls", 1), at("10:00:03"));
    expect([two.status, answered.toolCallsWithoutProgress, answered.toolCallsUsed]).toEqual(["open", 0, 2]);
    expect([again.status, again.pauseReason, again.toolCallsWithoutProgress, again.toolCallsUsed]).toEqual(["paused", "no_progress", 3, 5]);
  });

  it("moves money but not the status of a run that is no longer open", () => {
    const next = settleTurn(run({ status: "paused", pauseReason: "no_progress", spent: 9n * USD, reserved: USD }), USD, served(2n * USD), at("10:00:00"));
    expect([next.status, next.spent, next.reserved]).toEqual(["paused", 11n * USD, 0n]);
  });

  it("resumes by clearing only the detector counters", () => {
    const paused = run({ status: "paused", pauseReason: "cost_velocity", pausedAt: at("10:00:00"), spent: USD, turnsUsed: 4, toolCallsUsed: 6, toolCallsWithoutProgress: 3, minuteStart: minuteOf(at("10:00:00")), minuteSpent: USD });
    expect(resumed(paused)).toEqual({ ...paused, status: "open", pauseReason: null, pausedAt: null, toolCallsWithoutProgress: 0, minuteStart: null, minuteSpent: 0n });
  });
});
