import { toUsd } from "@router/money";
import type { events } from "@router/proto";

const orNull = (s: string): string | null => (s === "" ? null : s);
const optional = (n: number | undefined): number | null => (n === undefined ? null : n);

/**
 * When the request ended, in milliseconds after it arrived: the gateway's own time (routing
 * overhead) plus the time inside every provider call. Null when neither is known (a request refused
 * before anything was dispatched).
 */
export function requestDurationMs(e: events.RequestCompleted): number | null {
  const upstream = e.attempts.reduce((sum, a) => sum + (a.durationMs ?? 0), 0);
  if (e.routingOverheadMs === undefined && upstream === 0) return null;
  return (e.routingOverheadMs ?? 0) + upstream;
}

/**
 * The metadata record of one completed request, as webhook destinations receive it under
 * `request`: model, provider, status, tokens, cost, timing, key name, client (the key's workspace),
 * agent, session and run. Built field by field from the event, so nothing else can slip in, and
 * never the prompt or the completion (the event carries neither).
 */
export function requestRecord(e: events.RequestCompleted) {
  const usage = e.usage;
  const prompt = usage?.promptTokens ?? 0;
  const completion = usage?.completionTokens ?? 0;
  return {
    id: e.requestId,
    created_at: new Date(Number(e.createdAtMs)).toISOString(),
    requested_model: e.requestedModel,
    model: orNull(e.servedModel),
    provider: orNull(e.providerSlug),
    status: e.status,
    finish_reason: orNull(e.finishReason),
    error_code: orNull(e.errorCode),
    streamed: e.streamed,
    cancelled: e.cancelled,
    is_byok: e.isByok,
    tokens: {
      prompt,
      completion,
      total: prompt + completion,
      cached: usage?.cachedTokens ?? 0,
      reasoning: usage?.reasoningTokens ?? 0,
    },
    // Billed is what the account is charged; list is the tokens at catalog list price.
    cost: {
      total_usd: toUsd(e.billedCostNanodollars),
      list_usd: toUsd(e.listCostNanodollars),
    },
    timing: {
      duration_ms: requestDurationMs(e),
      ttft_ms: optional(e.ttftMs),
      generation_ms: optional(e.generationMs),
      routing_overhead_ms: optional(e.routingOverheadMs),
    },
    key_name: orNull(e.keyName),
    client: orNull(e.workspaceName),
    workspace_id: orNull(e.workspaceId),
    agent: orNull(e.agent),
    session_id: orNull(e.sessionId),
    run_id: orNull(e.runId),
  };
}

export type RequestRecord = ReturnType<typeof requestRecord>;

/** The webhook body: `type` and `request` (Events, in the service README); `test` marks the test operation's record. */
export function webhookBody(e: events.RequestCompleted, opts: { test: boolean }): string {
  return JSON.stringify({ type: "request.completed", test: opts.test, request: requestRecord(e) });
}
