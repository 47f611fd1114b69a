import type { EndpointHealthRow } from "./health-store";

/** A recent failure rate at or above this demotes an endpoint within its model... */
export const DEGRADED_FAILURE_RATE = 0.5;
/** ...once it rests on at least this many counted attempts, so one unlucky call does not. */
export const DEGRADED_MIN_ATTEMPTS = 5;

/** What the catalog shows for an endpoint. */
export interface EndpointHealth {
  /** Fraction of counted attempts that succeeded over the last 24 h; null without attempts. */
  uptime: number | null;
  /** Mean time to first token (ms, rounded) of successful attempts over the last 24 h; null without any. */
  latencyMs: number | null;
}

const UNMEASURED: EndpointHealth = { uptime: null, latencyMs: null };

/**
 * Endpoint health at one moment, indexed for the hot path: Plan asks `isDegraded` per candidate
 * (a set lookup), the catalog routes ask `of`. Immutable; the cache swaps in a new one.
 */
export class HealthSnapshot {
  private readonly byEndpoint = new Map<string, EndpointHealth>();
  private readonly degraded = new Set<string>();

  constructor(rows: readonly EndpointHealthRow[]) {
    for (const r of rows) {
      this.byEndpoint.set(r.endpointId, {
        uptime: r.dayAttempts > 0 ? (r.dayAttempts - r.dayFailures) / r.dayAttempts : null,
        latencyMs: r.dayTtftCount > 0 ? Math.round(r.dayTtftSumMs / r.dayTtftCount) : null,
      });
      if (r.recentAttempts >= DEGRADED_MIN_ATTEMPTS && r.recentFailures / r.recentAttempts >= DEGRADED_FAILURE_RATE) {
        this.degraded.add(r.endpointId);
      }
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

  of(endpointId: string): EndpointHealth {
    return this.byEndpoint.get(endpointId) ?? UNMEASURED;
  }
}
