import type { Logger } from "@router/logging";
import { routing } from "@router/proto";
import { unaryHandler, type GrpcService } from "@router/grpc-kit";
import type { RoutingMetrics } from "../metrics";
import { planRequest, type PlanSources } from "./planner";

export type { PlanSources } from "./planner";

/**
 * `router.routing.v1.RoutingService` over the in-memory catalog, health, account defaults and
 * presets: the database is read only for an organisation's (or a preset's) first Plan and then in
 * the background, never once per call; a sticky key's pins cost one Redis round trip.
 */
export function routingGrpcService(sources: PlanSources, log: Logger, metrics?: RoutingMetrics): GrpcService {
  const implementation: routing.RoutingServiceServer = {
    plan: unaryHandler(async (req: routing.PlanRequest) => {
      const done = metrics?.planDuration.startTimer();
      try {
        return await planRequest(req, sources);
      } finally {
        done?.();
      }
    }, log),
  };
  return { definition: routing.RoutingServiceService, implementation };
}
