import type { Logger } from "@router/logging";
import { routing } from "@router/proto";
import { unaryHandler, type GrpcService } from "@router/grpc-kit";
import type { CatalogCache } from "../catalog/catalog-cache";
import type { DefaultsCache } from "../defaults/defaults-cache";
import { NEVER_SET } from "../defaults/routing-defaults";
import type { HealthCache } from "../health/health-cache";
import type { RoutingMetrics } from "../metrics";
import { plan } from "./plan";

export interface PlanSources {
  catalog: CatalogCache;
  health: HealthCache;
  defaults: DefaultsCache;
}

/**
 * `router.routing.v1.RoutingService` over the in-memory catalog, health and account defaults: the
 * database is read only for an organisation's first Plan and then every few seconds per
 * organisation in the background, never once per call.
 */
export function routingGrpcService(sources: PlanSources, log: Logger, metrics?: RoutingMetrics): GrpcService {
  const implementation: routing.RoutingServiceServer = {
    plan: unaryHandler(async (req: routing.PlanRequest) => {
      const done = metrics?.planDuration.startTimer();
      try {
        const account = req.orgId ? await sources.defaults.get(req.orgId) : NEVER_SET;
        return plan(req, sources.catalog.snapshot(), sources.health.snapshot(), account);
      } finally {
        done?.();
      }
    }, log),
  };
  return { definition: routing.RoutingServiceService, implementation };
}
