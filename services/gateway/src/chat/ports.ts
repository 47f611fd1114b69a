import type * as grpc from "@grpc/grpc-js";
import { callUnary } from "@router/grpc-kit";
import type { ledger, routing } from "@router/proto";

/** What the chat path asks of the routing service. */
export interface RoutingPort {
  plan(req: routing.PlanRequest): Promise<routing.PlanResponse>;
}

/** What the chat path asks of the ledger. */
export interface LedgerPort {
  admit(req: ledger.AdmitRequest): Promise<ledger.AdmitResponse>;
  /** Settles and releases holds in one call (see HoldClosings). */
  closeHolds(req: ledger.CloseHoldsRequest): Promise<ledger.CloseHoldsResponse>;
  /** Places a spend lease (see SpendLeases). */
  lease(req: ledger.LeaseRequest): Promise<ledger.LeaseResponse>;
}

export interface PortOptions {
  /** Deadline of each call; a slow service becomes a 503, never a hang. */
  deadlineMs?: number;
}

/** RoutingPort over the generated gRPC client (built once, in main). */
export function grpcRoutingPort(client: routing.RoutingServiceClient, opts: PortOptions = {}): RoutingPort {
  const deadlineMs = opts.deadlineMs ?? 2_000;
  return {
    plan: (req) => callUnary(client as unknown as grpc.Client, client.plan, req, { deadlineMs, service: "routing" }),
  };
}

/** LedgerPort over the generated gRPC client (built once, in main). */
export function grpcLedgerPort(client: ledger.LedgerServiceClient, opts: PortOptions = {}): LedgerPort {
  const deadlineMs = opts.deadlineMs ?? 2_000;
  const c = client as unknown as grpc.Client;
  return {
    admit: (req) => callUnary(c, client.admit, req, { deadlineMs, service: "ledger" }),
    closeHolds: (req) => callUnary(c, client.closeHolds, req, { deadlineMs, service: "ledger" }),
    lease: (req) => callUnary(c, client.lease, req, { deadlineMs, service: "ledger" }),
  };
}
