import type { events, eventViews } from "@router/proto";
import { outcomeOf } from "./attempt-outcome";
import { bucketStartOf, DAY_BUCKETS, windowStart } from "./health-window";

/** What one completed request adds to one endpoint's bucket. */
export interface BucketIncrement {
  endpointId: string;
  bucketStartMs: number;
  attempts: number;
  failures: number;
  durationSumMs: number;
  durationCount: number;
  ttftSumMs: number;
  ttftCount: number;
  /** Completion tokens of the attempt that served the request (throughput). */
  outputTokens: number;
  /** The time that attempt spent generating: after its first token when measured, else all of it. */
  generationMs: number;
  /** Tool calls in the answer that attempt served, and those with arguments that are not a JSON object. */
  toolCalls: number;
  invalidToolCalls: number;
}

/**
 * Folds a completed request's attempts into per-endpoint, per-bucket increments, sorted by endpoint
 * then bucket so that concurrent transactions lock rows in one order. An attempt is placed by its
 * start time (the request's, or `now`, when the gateway sent none; never later than `now`, which
 * absorbs clock skew between hosts); one already outside the 24 h retention is dropped.
 */
export function healthIncrements(completed: eventViews.RequestCompletedHealth, now: Date): BucketIncrement[] {
  const nowMs = now.getTime();
  const oldest = windowStart(now, DAY_BUCKETS).getTime();
  const byKey = new Map<string, BucketIncrement>();
  const servedBy = servingAttempt(completed);
  for (const attempt of completed.attempts) {
    const outcome = outcomeOf(attempt);
    if (outcome === "ignored" || attempt.endpointId === "") continue;
    const startedMs = Number(attempt.startedAtMs) || Number(completed.createdAtMs) || nowMs;
    const bucketStartMs = bucketStartOf(Math.min(startedMs, nowMs));
    if (bucketStartMs < oldest) continue;
    const key = `${attempt.endpointId}\u0000${bucketStartMs}`;
    let inc = byKey.get(key);
    if (!inc) {
      inc = {
        endpointId: attempt.endpointId,
        bucketStartMs,
        attempts: 0,
        failures: 0,
        durationSumMs: 0,
        durationCount: 0,
        ttftSumMs: 0,
        ttftCount: 0,
        outputTokens: 0,
        generationMs: 0,
        toolCalls: 0,
        invalidToolCalls: 0,
      };
      byKey.set(key, inc);
    }
    inc.attempts += 1;
    if (outcome === "failure") inc.failures += 1;
    if (attempt.durationMs !== undefined && attempt.durationMs >= 0) {
      inc.durationSumMs += attempt.durationMs;
      inc.durationCount += 1;
    }
    if (outcome === "ok" && attempt.ttftMs !== undefined && attempt.ttftMs >= 0) {
      inc.ttftSumMs += attempt.ttftMs;
      inc.ttftCount += 1;
    }
    if (attempt === servedBy) {
      const tokens = completed.usage?.completionTokens ?? 0;
      const generationMs = (attempt.durationMs ?? 0) - (attempt.ttftMs ?? 0);
      // Both or neither: a throughput needs tokens over a time.
      if (tokens > 0 && generationMs > 0) {
        inc.outputTokens += tokens;
        inc.generationMs += generationMs;
      }
      inc.toolCalls += Math.max(0, completed.toolCalls);
      inc.invalidToolCalls += Math.min(Math.max(0, completed.invalidToolCalls), Math.max(0, completed.toolCalls));
    }
  }
  return [...byKey.values()].sort((a, b) =>
    a.endpointId !== b.endpointId ? (a.endpointId < b.endpointId ? -1 : 1) : a.bucketStartMs - b.bucketStartMs,
  );
}

// The last ok attempt on the endpoint the request names as served: the one whose usage the event carries.
function servingAttempt(completed: eventViews.RequestCompletedHealth): events.UpstreamAttempt | undefined {
  if (!completed.endpointId) return undefined;
  for (let i = completed.attempts.length - 1; i >= 0; i -= 1) {
    const a = completed.attempts[i];
    if (a && a.status === "ok" && a.endpointId === completed.endpointId) return a;
  }
  return undefined;
}
