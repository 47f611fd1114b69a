import { invalid } from "@router/errors";
import { unaryHandler } from "@router/grpc-kit";
import type { Logger } from "@router/logging";
import type { Clock, WindowKind } from "@router/money";
import { ledger } from "@router/proto";
import type { LedgerMetrics } from "../metrics";
import { admit } from "./admission";
import type { CeilingRule } from "./ceilings";
import type { CounterAdmissions } from "./counter-admissions";
import { grantLease } from "./leases";
import { closeHolds, release, settle, type ClosingQueue } from "./settlement";
import type { HoldStore } from "./store";
import { usageOf } from "./usage";

export interface LedgerServiceDeps {
  store: HoldStore;
  admissions: CounterAdmissions;
  closings: ClosingQueue;
  clock: Clock;
  log: Logger;
  holdTtlMs: number;
  leaseTtlMs: number;
  /** A lease takes at most 1/leaseShare of a ceiling's headroom. */
  leaseShare: number;
  /** Counts and times Admit and counts Lease; none when omitted. */
  metrics?: LedgerMetrics;
}

/** The gRPC surface: decode and check the request, call the domain, encode the answer. */
export function ledgerService(deps: LedgerServiceDeps): ledger.LedgerServiceServer {
  return {
    admit: unaryHandler(async (req: ledger.AdmitRequest): Promise<ledger.AdmitResponse> => {
      if (!req.dryRun) required(req.requestId, "request_id");
      required(req.orgId, "org_id");
      nonNegative(req.worstCaseNanodollars, "worst_case_nanodollars");
      const admitted = deps.metrics?.startAdmit();
      const result = await admit(
        {
          requestId: req.requestId,
          orgId: req.orgId,
          ceilings: req.ceilings.map(ceilingRule),
          worstCase: req.worstCaseNanodollars,
          isByok: req.isByok,
          dryRun: req.dryRun,
        },
        deps,
      );
      admitted?.(result);
      if (!result.admitted) {
        return {
          admitted: false,
          holdId: "",
          limitWarning: "",
          refusal: { httpStatus: 403, code: "budget_exceeded", ...result.refusal },
        };
      }
      return { admitted: true, holdId: result.holdId, limitWarning: result.warning, refusal: undefined };
    }, deps.log),

    settle: unaryHandler(async (req: ledger.SettleRequest): Promise<ledger.SettleResponse> => {
      nonNegative(req.listCostNanodollars, "list_cost_nanodollars");
      nonNegative(req.billedCostNanodollars, "billed_cost_nanodollars");
      await settle(req.holdId, { listCost: req.listCostNanodollars, billedCost: req.billedCostNanodollars }, deps);
      return {};
    }, deps.log),

    release: unaryHandler(async (req: ledger.ReleaseRequest): Promise<ledger.ReleaseResponse> => {
      nonNegative(req.keepNanodollars, "keep_nanodollars");
      await release(req.holdId, req.keepNanodollars, deps);
      return {};
    }, deps.log),

    closeHolds: unaryHandler(async (req: ledger.CloseHoldsRequest): Promise<ledger.CloseHoldsResponse> => {
      req.spends.forEach((s, i) => {
        required(s.holdId, `spends[${i}].hold_id`);
        required(s.requestId, `spends[${i}].request_id`);
        nonNegative(s.listCostNanodollars, `spends[${i}].list_cost_nanodollars`);
        nonNegative(s.billedCostNanodollars, `spends[${i}].billed_cost_nanodollars`);
      });
      req.settlements.forEach((s, i) => {
        required(s.holdId, `settlements[${i}].hold_id`);
        nonNegative(s.listCostNanodollars, `settlements[${i}].list_cost_nanodollars`);
        nonNegative(s.billedCostNanodollars, `settlements[${i}].billed_cost_nanodollars`);
      });
      req.releases.forEach((r, i) => {
        required(r.holdId, `releases[${i}].hold_id`);
        nonNegative(r.keepNanodollars, `releases[${i}].keep_nanodollars`);
      });
      const unknown = await closeHolds(
        {
          spends: req.spends.map((s) => ({
            holdId: s.holdId,
            requestId: s.requestId,
            listCost: s.listCostNanodollars,
            billedCost: s.billedCostNanodollars,
          })),
          settlements: req.settlements.map((s) => ({
            holdId: s.holdId,
            listCost: s.listCostNanodollars,
            billedCost: s.billedCostNanodollars,
          })),
          releases: req.releases.map((r) => ({ holdId: r.holdId, keep: r.keepNanodollars })),
        },
        deps,
      );
      return { unknownHoldIds: unknown };
    }, deps.log),

    lease: unaryHandler(async (req: ledger.LeaseRequest): Promise<ledger.LeaseResponse> => {
      required(req.leaseId, "lease_id");
      required(req.orgId, "org_id");
      if (req.wantNanodollars <= 0n) invalidField("want_nanodollars", "must be positive");
      if (req.minNanodollars < 0n || req.minNanodollars > req.wantNanodollars) {
        invalidField("min_nanodollars", "must be between 0 and want_nanodollars");
      }
      const result = await grantLease(
        {
          leaseId: req.leaseId,
          orgId: req.orgId,
          ceilings: req.ceilings.map(ceilingRule),
          isByok: req.isByok,
          want: req.wantNanodollars,
          min: req.minNanodollars,
        },
        deps,
      );
      deps.metrics?.countLease(result);
      if (!result.granted) {
        return { granted: false, holdId: "", amountNanodollars: 0n, expiresAtMs: 0n, windowEndsAtMs: undefined };
      }
      return {
        granted: true,
        holdId: result.holdId,
        amountNanodollars: result.amount,
        expiresAtMs: BigInt(result.expiresAt.getTime()),
        windowEndsAtMs: result.windowEnd ? BigInt(result.windowEnd.getTime()) : undefined,
      };
    }, deps.log),

    usage: unaryHandler(async (req: ledger.UsageRequest): Promise<ledger.UsageResponse> => {
      const usage = await usageOf(req.ceilings.map(ceilingRule), deps);
      return {
        usage: usage.map((u) => ({
          subjectKind: u.subjectKind,
          subjectId: u.subjectId,
          usedNanodollars: u.used,
          windowEndsAtMs: u.windowEnd ? BigInt(u.windowEnd.getTime()) : undefined,
        })),
      };
    }, deps.log),
  };
}

const WINDOWS: Partial<Record<ledger.Window, WindowKind>> = {
  // An unset window is a lifetime ceiling, as a key's null `limit_reset` is.
  [ledger.Window.WINDOW_UNSPECIFIED]: "lifetime",
  [ledger.Window.WINDOW_DAILY]: "daily",
  [ledger.Window.WINDOW_WEEKLY]: "weekly",
  [ledger.Window.WINDOW_MONTHLY]: "monthly",
  [ledger.Window.WINDOW_LIFETIME]: "lifetime",
};

const MODES = new Set<ledger.LimitMode>([
  ledger.LimitMode.LIMIT_MODE_UNSPECIFIED,
  ledger.LimitMode.LIMIT_MODE_HARD,
  ledger.LimitMode.LIMIT_MODE_SOFT,
]);

const SUBJECT_KIND = /^[a-z][a-z_]{0,31}$/;

function ceilingRule(c: ledger.Ceiling, i: number): CeilingRule {
  const field = `ceilings[${i}]`;
  if (!SUBJECT_KIND.test(c.subjectKind)) invalidField(`${field}.subject_kind`, "must be a lower-case word such as key");
  required(c.subjectId, `${field}.subject_id`);
  const window = WINDOWS[c.window];
  if (!window) invalidField(`${field}.window`, "is not a known window");
  if (!MODES.has(c.mode)) invalidField(`${field}.mode`, "is not a known limit mode");
  return {
    subjectKind: c.subjectKind,
    subjectId: c.subjectId,
    limit: c.limitNanodollars,
    window,
    // Hard is the default mode of a ceiling.
    hard: c.mode !== ledger.LimitMode.LIMIT_MODE_SOFT,
    includeByok: c.includeByok,
  };
}

function required(value: string, field: string): void {
  if (value === "") invalidField(field, "is required");
}

function nonNegative(value: bigint, field: string): void {
  if (value < 0n) invalidField(field, "must not be negative");
}

function invalidField(field: string, message: string): never {
  throw invalid(field, message);
}
