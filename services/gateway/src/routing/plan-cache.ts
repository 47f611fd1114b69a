import type { Clock } from "@router/money";
import type { routing } from "@router/proto";
import { LoadingCache } from "@router/loading-cache";
import type { RoutingPort } from "./routing-port";

/**
 * Remembers routing's answer to an identical plan request for a moment. A plan is a pure function
 * of the request (which carries the organisation's credentialed providers) and of routing's catalog
 * and health snapshots, which routing itself refreshes only every few seconds; so a sub-second
 * memory saves a gRPC round trip on almost every request without changing what is routed. Identical
 * requests in flight share one call.
 */
export function cachedRoutingPort(port: RoutingPort, clock: Clock, opts: { ttlMs: number; maxEntries?: number }): RoutingPort {
  if (opts.ttlMs <= 0) return port;
  const cache = new LoadingCache<routing.PlanResponse>(
    (key) => port.plan(JSON.parse(key) as routing.PlanRequest),
    clock,
    { ttlMs: opts.ttlMs, maxEntries: opts.maxEntries ?? 10_000 },
  );
  return {
    plan: (req) =>
      cache.get(
        JSON.stringify({
          orgId: req.orgId,
          model: req.model,
          models: req.models,
          byokProviders: [...req.byokProviders].sort(),
          accountFallbackModels: req.accountFallbackModels,
        }),
      ),
  };
}
