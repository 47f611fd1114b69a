import type * as grpc from "@grpc/grpc-js";
import { callUnary } from "@router/grpc-kit";
import type { ledger } from "@router/proto";

/** What the gateway asks of the ledger. */
export interface LedgerPort {
  admit(req: ledger.AdmitRequest): Promise<ledger.AdmitResponse>;
  /** Settles and releases holds in one call (see HoldClosings). */
  closeHolds(req: ledger.CloseHoldsRequest): Promise<ledger.CloseHoldsResponse>;
  /** Places a spend lease (see SpendLeases). */
  lease(req: ledger.LeaseRequest): Promise<ledger.LeaseResponse>;
  /** Which workspaces and agents have a budget (see BudgetSubjects). */
  budgetSubjects(req: ledger.BudgetSubjectsRequest): Promise<ledger.BudgetSubjectsResponse>;
  /** The deployment's request fee and an organisation's lifetime purchase (see CreditStanding). */
  creditTerms(req: ledger.CreditTermsRequest): Promise<ledger.CreditTermsResponse>;
}

/** LedgerPort over the generated gRPC client (built once, in main). */
export function grpcLedgerPort(client: ledger.LedgerServiceClient, opts: { deadlineMs?: number } = {}): LedgerPort {
  // A slow ledger becomes a 503, never a hang.
  const deadlineMs = opts.deadlineMs ?? 2_000;
  const c = client as unknown as grpc.Client;
  // Bound once here: callUnary calls each method on the client it is given.
  const admit = client.admit.bind(client);
  const closeHolds = client.closeHolds.bind(client);
  const lease = client.lease.bind(client);
  const budgetSubjects = client.budgetSubjects.bind(client);
  const creditTerms = client.creditTerms.bind(client);
  return {
    admit: (req) => callUnary(c, admit, req, { deadlineMs, service: "ledger" }),
    closeHolds: (req) => callUnary(c, closeHolds, req, { deadlineMs, service: "ledger" }),
    lease: (req) => callUnary(c, lease, req, { deadlineMs, service: "ledger" }),
    budgetSubjects: (req) => callUnary(c, budgetSubjects, req, { deadlineMs, service: "ledger" }),
    creditTerms: (req) => callUnary(c, creditTerms, req, { deadlineMs, service: "ledger" }),
  };
}
