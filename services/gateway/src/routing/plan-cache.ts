import type { Clock } from "@router/money";
import { routing } from "@router/proto";
import { LoadingCache, type LoadingCacheStats } from "@router/loading-cache";
import type { RoutingPort } from "./routing-port";

/** The plan cache, and how a configuration write through this gateway reaches it. */
export interface CachedRoutingPort extends RoutingPort {
  stats(): LoadingCacheStats | null;
  /**
   * Forgets every plan remembered for the organisation: called after this gateway forwarded a
   * change to its routing configuration, so its very next request is planned afresh.
   */
  forgetOrganisation(orgId: string): void;
}

/**
 * Remembers routing's answer to an identical plan request for a moment. A deterministic plan is a
 * function of the request (which carries the organisation's credentialed providers and this
 * gateway's open circuits) and of routing's catalog, health, defaults and preset caches, which
 * routing itself refreshes every few seconds; so a sub-second memory saves a gRPC round trip on
 * most requests without changing what is routed. Identical requests in flight share one call.
 *
 * Two kinds of plan are never reused: a weighted random draw (`ordering: sampled`), which each
 * request makes afresh, and a request with a sticky key, whose pins change as requests are served.
 *
 * A write forwarded through this gateway (defaults, presets, guardrails, privacy) bumps the
 * organisation's generation, which is part of every key: older entries are never read again and
 * age out, so forgetting costs no scan.
 */
export function cachedRoutingPort(port: RoutingPort, clock: Clock, opts: { ttlMs: number; maxEntries?: number }): CachedRoutingPort {
  if (opts.ttlMs <= 0) return { plan: (req) => port.plan(req), stats: () => null, forgetOrganisation: () => undefined };
  const cache = new LoadingCache<routing.PlanResponse>(
    (key) => port.plan(routing.PlanRequest.fromJSON(JSON.parse(key.slice(key.indexOf("|") + 1)))),
    clock,
    { ttlMs: opts.ttlMs, maxEntries: opts.maxEntries ?? 10_000 },
  );
  const generations = new Map<string, number>();
  return {
    stats: () => cache.stats(),
    forgetOrganisation(orgId) {
      generations.set(orgId, (generations.get(orgId) ?? 0) + 1);
    },
    async plan(req) {
      if (req.sessionId || req.promptCacheKey || req.headerSessionId) return port.plan(req);
      const json = JSON.stringify(
        routing.PlanRequest.toJSON({ ...req, byokProviders: [...req.byokProviders].sort(), openCircuits: [...req.openCircuits].sort() }),
      );
      const key = `${generations.get(req.orgId) ?? 0}|${json}`;
      const answer = await cache.get(key);
      // The draw this request got is not handed to the next one.
      if (answer.ordering === "sampled") cache.invalidate(key);
      return answer;
    },
  };
}
