import type { Clock } from "@router/money";
import { routing } from "@router/proto";
import { LoadingCache, type LoadingCacheStats } from "@router/loading-cache";
import type { RoutingPort } from "./routing-port";

/**
 * Remembers routing's answer to an identical plan request for a moment. A deterministic plan is a
 * function of the request (which carries the organisation's credentialed providers and this
 * gateway's open circuits) and of routing's catalog, health, defaults and preset caches, which
 * routing itself refreshes every few seconds; so a sub-second memory saves a gRPC round trip on
 * most requests without changing what is routed. Identical requests in flight share one call.
 *
 * Two kinds of plan are never reused: a weighted random draw (`ordering: sampled`), which each
 * request makes afresh, and a request with a sticky key, whose pins change as requests are served.
 */
export function cachedRoutingPort(
  port: RoutingPort,
  clock: Clock,
  opts: { ttlMs: number; maxEntries?: number },
): RoutingPort & { stats(): LoadingCacheStats | null } {
  if (opts.ttlMs <= 0) return { plan: (req) => port.plan(req), stats: () => null };
  const cache = new LoadingCache<routing.PlanResponse>(
    (key) => port.plan(routing.PlanRequest.fromJSON(JSON.parse(key))),
    clock,
    { ttlMs: opts.ttlMs, maxEntries: opts.maxEntries ?? 10_000 },
  );
  return {
    stats: () => cache.stats(),
    async plan(req) {
      if (req.sessionId || req.promptCacheKey || req.headerSessionId) return port.plan(req);
      const key = JSON.stringify(
        routing.PlanRequest.toJSON({ ...req, byokProviders: [...req.byokProviders].sort(), openCircuits: [...req.openCircuits].sort() }),
      );
      const answer = await cache.get(key);
      // The draw this request got is not handed to the next one.
      if (answer.ordering === "sampled") cache.invalidate(key);
      return answer;
    },
  };
}
