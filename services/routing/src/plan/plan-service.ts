import type { Logger } from "@router/logging";
import { routing } from "@router/proto";
import { unaryHandler, type GrpcService } from "@router/grpc-kit";
import type { CatalogCache } from "../catalog/catalog-cache";
import { plan } from "./plan";

/** `router.routing.v1.RoutingService` over the in-memory catalog: no database round trip per call. */
export function routingGrpcService(cache: CatalogCache, log: Logger): GrpcService {
  const implementation: routing.RoutingServiceServer = {
    plan: unaryHandler(async (req: routing.PlanRequest) => plan(req, cache.snapshot()), log),
  };
  return { definition: routing.RoutingServiceService, implementation };
}
