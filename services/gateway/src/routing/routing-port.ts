import type * as grpc from "@grpc/grpc-js";
import { callUnary } from "@router/grpc-kit";
import type { routing } from "@router/proto";

/** What the gateway asks of the routing service. */
export interface RoutingPort {
  plan(req: routing.PlanRequest): Promise<routing.PlanResponse>;
}

/** RoutingPort over the generated gRPC client (built once, in main). */
export function grpcRoutingPort(client: routing.RoutingServiceClient, opts: { deadlineMs?: number } = {}): RoutingPort {
  // A slow routing service becomes a 503, never a hang.
  const deadlineMs = opts.deadlineMs ?? 2_000;
  const c = client as unknown as grpc.Client;
  // Bound once here: callUnary calls the method on the client it is given.
  const plan = client.plan.bind(client);
  return {
    plan: (req) => callUnary(c, plan, req, { deadlineMs, service: "routing" }),
  };
}
