import { toUsd } from "@router/money";
import { isClosed } from "./run-states";
import type { Run, RunTurnRow } from "./run-store";

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/** A Run as the API answers it: USD numbers, `remaining` = budget - spent - reserved. */
export function runView(r: Run) {
  return {
    id: r.id,
    status: r.status,
    goal: r.goal,
    budget: toUsd(r.budget),
    spent: toUsd(r.spent),
    reserved: toUsd(r.reserved),
    remaining: toUsd(r.budget - r.spent - r.reserved),
    max_turns: r.maxTurns,
    turns_used: r.turnsUsed,
    max_tool_calls: r.maxToolCalls,
    tool_calls_used: r.toolCallsUsed,
    model_policy: r.modelPolicy,
    max_cost_per_minute: r.maxCostPerMinute === null ? null : toUsd(r.maxCostPerMinute),
    max_tool_calls_without_progress: r.maxToolCallsWithoutProgress,
    tool_calls_without_progress: r.toolCallsWithoutProgress,
    pause_reason: r.pauseReason,
    paused_at: iso(r.pausedAt),
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    closed_at: iso(r.closedAt),
  };
}

/** Cached prompt tokens over prompt tokens; null when there were none. */
function cacheHitRate(prompt: number, cached: number): number | null {
  return prompt > 0 ? cached / prompt : null;
}

/**
 * The run and its tree: every turn in order with its cost, cache hit rate, tool calls (failed ones:
 * arguments that were not valid JSON) and whether it switched model from the turn served before it;
 * then the run's totals and, once it is closed, its terminal status.
 */
export function runTreeView(r: Run, turns: RunTurnRow[]) {
  let previousModel = "";
  let switches = 0;
  let prompt = 0;
  let cached = 0;
  let failedToolCalls = 0;
  const rows = turns.map((t) => {
    const switched = t.state === "served" && previousModel !== "" && t.model !== previousModel;
    if (t.state === "served") {
      if (switched) switches += 1;
      previousModel = t.model;
      prompt += t.promptTokens;
      cached += t.cachedTokens;
    }
    failedToolCalls += t.failedToolCalls;
    return {
      turn: t.turn,
      request_id: t.requestId,
      status: t.state,
      model: t.model || null,
      finish_reason: t.finishReason || null,
      cost: toUsd(t.cost),
      reserved: t.state === "admitted" ? toUsd(t.reserved) : 0,
      tool_calls: t.toolCalls,
      failed_tool_calls: t.failedToolCalls,
      prompt_tokens: t.promptTokens,
      cached_tokens: t.cachedTokens,
      cache_hit_rate: cacheHitRate(t.promptTokens, t.cachedTokens),
      model_switch: switched,
      admitted_at: t.admittedAt.toISOString(),
      settled_at: iso(t.settledAt),
    };
  });
  return {
    ...runView(r),
    tree: {
      turns: rows,
      cache_hit_rate: cacheHitRate(prompt, cached),
      failed_tool_calls: failedToolCalls,
      model_switches: switches,
      terminal_status: isClosed(r.status) ? r.status : null,
    },
  };
}
