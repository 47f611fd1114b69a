import type { EndpointHealthRow } from "./health-store";

/** A recent failure rate at or above this demotes an endpoint within its model... */
export const DEGRADED_FAILURE_RATE = 0.5;
/** ...once it rests on at least this many counted attempts, so one unlucky call does not. */
export const DEGRADED_MIN_ATTEMPTS = 5;

/** What the catalog shows for an endpoint, and what the sorts order by. */
export interface EndpointHealth {
  /** Fraction of counted attempts that succeeded over the last 24 h; null without attempts. */
  uptime: number | null;
  /** Mean time to first token (ms, rounded) of successful attempts over the last 24 h; null without any. */
  latencyMs: number | null;
  /** Completion tokens per second of the attempts that served, over the last 24 h; null without any. */
  throughput: number | null;
  /** Fraction of the tool calls in served answers whose arguments were a JSON object, over the last 24 h; null without any. */
  toolCallReliability: number | null;
}

const UNMEASURED: EndpointHealth = { uptime: null, latencyMs: null, throughput: null, toolCallReliability: null };

/**
 * Endpoint health at one moment, indexed for the hot path: Plan asks `isDegraded` and
 * `recentFailureRate` per candidate (map lookups), the sorts and the catalog routes ask `of`.
 * Immutable; the cache swaps in a new one.
 */
export class HealthSnapshot {
  private readonly byEndpoint = new Map<string, EndpointHealth>();
  private readonly degraded = new Set<string>();
  private readonly failureRates = new Map<string, number>();

  constructor(rows: readonly EndpointHealthRow[]) {
    for (const r of rows) {
      this.byEndpoint.set(r.endpointId, {
        uptime: r.dayAttempts > 0 ? (r.dayAttempts - r.dayFailures) / r.dayAttempts : null,
        latencyMs: r.dayTtftCount > 0 ? Math.round(r.dayTtftSumMs / r.dayTtftCount) : null,
        throughput: r.dayOutputTokens > 0 && r.dayGenerationMs > 0 ? (r.dayOutputTokens * 1000) / r.dayGenerationMs : null,
        toolCallReliability: r.dayToolCalls > 0 ? (r.dayToolCalls - r.dayInvalidToolCalls) / r.dayToolCalls : null,
      });
      if (r.recentAttempts >= DEGRADED_MIN_ATTEMPTS && r.recentFailures / r.recentAttempts >= DEGRADED_FAILURE_RATE) {
        this.degraded.add(r.endpointId);
      }
      // Smoothed by one phantom success, so a single failure halves an endpoint's weight rather than
      // zeroing it, while a run of failures still drives it toward nothing.
      if (r.recentFailures > 0) this.failureRates.set(r.endpointId, r.recentFailures / (r.recentAttempts + 1));
    }
  }

  static empty(): HealthSnapshot {
    return new HealthSnapshot([]);
  }

  /** True when the endpoint failed at least half of at least 5 attempts in the recent window. */
  isDegraded(endpointId: string): boolean {
    return this.degraded.has(endpointId);
  }

  /** Whether any endpoint is degraded: lets Plan skip reordering in the common case. */
  get anyDegraded(): boolean {
    return this.degraded.size > 0;
  }

  /** Failures over (attempts + 1) in the recent window; 0 without failures. */
  recentFailureRate(endpointId: string): number {
    return this.failureRates.get(endpointId) ?? 0;
  }

  of(endpointId: string): EndpointHealth {
    return this.byEndpoint.get(endpointId) ?? UNMEASURED;
  }
}
