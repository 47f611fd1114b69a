import type * as grpc from "@grpc/grpc-js";
import { callUnary } from "@router/grpc-kit";
import type { ledger } from "@router/proto";

/** A request as the gateway's parts ask it: the port says itself whether the budgets must be read fresh. */
export type Asked<T> = Omit<T, "freshBudgets">;

/** What the gateway asks of the ledger. */
export interface LedgerPort {
  admit(req: Asked<ledger.AdmitRequest>): Promise<ledger.AdmitResponse>;
  /** Renews running requests' holds and trims, releases and covers leases, in one call per batch (see HoldClosings). */
  closeHolds(req: ledger.CloseHoldsRequest): Promise<ledger.CloseHoldsResponse>;
  /** Places a spend lease (see SpendLeases). */
  lease(req: Asked<ledger.LeaseRequest>): Promise<ledger.LeaseResponse>;
  /** Which workspaces and agents have a budget (see BudgetSubjects). */
  budgetSubjects(req: Asked<ledger.BudgetSubjectsRequest>): Promise<ledger.BudgetSubjectsResponse>;
  /** The deployment's request fee and an organisation's lifetime purchase (see CreditStanding). */
  creditTerms(req: ledger.CreditTermsRequest): Promise<ledger.CreditTermsResponse>;
}

/**
 * LedgerPort over the generated gRPC client (built once, in main). `freshBudgets` says whether this
 * gateway changed an organisation's budgets so lately that a ledger replica may still hold the old
 * ones in memory: Admit, Lease and BudgetSubjects then ask for them to be read from the store.
 */
export function grpcLedgerPort(
  client: ledger.LedgerServiceClient,
  opts: { deadlineMs?: number; freshBudgets?: (orgId: string) => boolean } = {},
): LedgerPort {
  // A slow ledger becomes a 503, never a hang.
  const deadlineMs = opts.deadlineMs ?? 2_000;
  const c = client as unknown as grpc.Client;
  // Bound once here: callUnary calls each method on the client it is given.
  const admit = client.admit.bind(client);
  const closeHolds = client.closeHolds.bind(client);
  const lease = client.lease.bind(client);
  const budgetSubjects = client.budgetSubjects.bind(client);
  const creditTerms = client.creditTerms.bind(client);
  const fresh = opts.freshBudgets ?? (() => false);
  return {
    admit: (req) => callUnary(c, admit, { ...req, freshBudgets: fresh(req.orgId) }, { deadlineMs, service: "ledger" }),
    closeHolds: (req) => callUnary(c, closeHolds, req, { deadlineMs, service: "ledger" }),
    lease: (req) => callUnary(c, lease, { ...req, freshBudgets: fresh(req.orgId) }, { deadlineMs, service: "ledger" }),
    budgetSubjects: (req) => callUnary(c, budgetSubjects, { ...req, freshBudgets: fresh(req.orgId) }, { deadlineMs, service: "ledger" }),
    creditTerms: (req) => callUnary(c, creditTerms, req, { deadlineMs, service: "ledger" }),
  };
}
