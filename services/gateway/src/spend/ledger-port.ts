import * as grpc from "@grpc/grpc-js";
import { CallStreams, callUnary } from "@router/grpc-kit";
import type { Logger } from "@router/logging";
import type { ledger } from "@router/proto";
import { tracingEnabled } from "@router/tracing";

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
 *
 * With `admitStreams`, Admit goes as messages on that many AdmitStream streams (one Admit per run
 * turn, and per request while a fee is charged or leases are off: its cheapest form), the other
 * methods as unary calls. While tracing is on, Admit stays unary: its span's context travels in
 * each call's metadata.
 */
export function grpcLedgerPort(
  client: ledger.LedgerServiceClient,
  opts: { deadlineMs?: number; freshBudgets?: (orgId: string) => boolean; admitStreams?: number; log?: Logger } = {},
): LedgerPort & { /** Ends the Admit streams once their calls are answered. */ close(): Promise<void> } {
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
  const admitUnary = (req: ledger.AdmitRequest) => callUnary(c, admit, req, { deadlineMs, service: "ledger" });
  const streams =
    opts.admitStreams && opts.log
      ? new CallStreams<ledger.AdmitRequest, ledger.AdmitResponse>({
          open: () => client.admitStream(),
          unary: admitUnary,
          service: "ledger",
          deadlineMs,
          streams: opts.admitStreams,
          log: opts.log,
        })
      : undefined;
  return {
    admit: (req) => {
      const asked = { ...req, freshBudgets: fresh(req.orgId) };
      return streams && !tracingEnabled() ? streams.call(asked) : admitUnary(asked);
    },
    closeHolds: (req) => callUnary(c, closeHolds, req, { deadlineMs, service: "ledger" }),
    lease: (req) => callUnary(c, lease, { ...req, freshBudgets: fresh(req.orgId) }, { deadlineMs, service: "ledger" }),
    budgetSubjects: (req) => callUnary(c, budgetSubjects, { ...req, freshBudgets: fresh(req.orgId) }, { deadlineMs, service: "ledger" }),
    creditTerms: (req) => callUnary(c, creditTerms, req, { deadlineMs, service: "ledger" }),
    close: async () => streams?.close(),
  };
}

/**
 * How many AdmitStream streams to keep to `client`: `configured` for a gRPC client of a networked
 * ledger, none for one served in process (`npm start`), which has no streams and no socket to spare.
 */
export function admitStreamsFor(client: ledger.LedgerServiceClient, configured: number): number {
  return client instanceof grpc.Client ? configured : 0;
}
