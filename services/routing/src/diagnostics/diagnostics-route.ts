import { Router } from "express";
import { DomainError } from "@router/errors";
import { identityOf, requireIdentity, type IdentityPublicKeys } from "@router/http-kit";
import type { LoadingCacheStats } from "@router/loading-cache";
import type { HealthCache } from "../health/health-cache";

/** Internal path the gateway's `GET /v1/health` reads; never forwarded to the public. */
export const DIAGNOSTICS_PATH = "/internal/diagnostics";

/**
 * What routing contributes to the operator diagnostics: the age of the endpoint health snapshot
 * Plan reads, and the counters of the caches Plan reads from (guardrails, catalog) on the replica
 * that answered. Read over HTTP, not added to Plan, so the hot path carries nothing for it. Only an
 * operator identity gets an answer; any other is told the route does not exist, like the public one.
 */
export function diagnosticsRoute(deps: {
  health: HealthCache;
  identityKeys: IdentityPublicKeys;
  caches: { guardrails: () => LoadingCacheStats; catalog: () => LoadingCacheStats };
}): Router {
  const router = Router();
  router.get(DIAGNOSTICS_PATH, requireIdentity(deps.identityKeys), (req, res) => {
    if (!identityOf(req).operator) throw new DomainError("not_found", `no route for GET ${DIAGNOSTICS_PATH}`);
    res.json({
      endpoint_health_age_ms: deps.health.ageMs(),
      caches: { guardrails: deps.caches.guardrails(), catalog: deps.caches.catalog() },
    });
  });
  return router;
}
