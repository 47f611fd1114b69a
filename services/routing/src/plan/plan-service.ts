import type { Logger } from "@router/logging";
import { routing } from "@router/proto";
import { unaryHandler, type GrpcService } from "@router/grpc-kit";
import type { CatalogCache } from "../catalog/catalog-cache";
import type { HealthCache } from "../health/health-cache";
import { plan } from "./plan";

/** `router.routing.v1.RoutingService` over the in-memory catalog and health: no database round trip per call. */
export function routingGrpcService(cache: CatalogCache, health: HealthCache, log: Logger): GrpcService {
  const implementation: routing.RoutingServiceServer = {
    plan: unaryHandler(async (req: routing.PlanRequest) => plan(req, cache.snapshot(), health.snapshot()), log),
  };
  return { definition: routing.RoutingServiceService, implementation };
}
