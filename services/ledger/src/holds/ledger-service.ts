import type { Db } from "@router/db";
import { invalid } from "@router/errors";
import { CallStreamsServer, unaryHandler } from "@router/grpc-kit";
import type { Logger } from "@router/logging";
import type { Clock, WindowKind } from "@router/money";
import { ledger } from "@router/proto";
import type { BudgetCache } from "../budgets/budget-cache";
import { AGENT_NAME, WORKSPACE_ID } from "../budgets/budget-rules";
import { workspaceBudgetsOf } from "../budgets/budget-store";
import type { LedgerMetrics } from "../metrics";
import { workspaceSpendThisMonth } from "../usage/usage-store";
import { chargesRequests, NO_FEE, requestFee, type FeeSchedule } from "../credits/credit-policy";
import { holdCredits, insufficientCreditsSentence, purchasedOf, returnCreditHold } from "../credits/credit-holds";
import { admit } from "./admission";
import type { CeilingRule } from "./ceilings";
import type { CounterAdmissions } from "./counter-admissions";
import { grantLease } from "./leases";
import { RUN_ID } from "../runs/run-rules";
import type { OpenTurns } from "../runs/open-turns";
import {
  closeHolds,
  type ClosingQueue,
  type FinishedRequest,
  type RunTurnFacts,
  type UsageQueue,
} from "./settlement";
import type { HoldStore } from "./store";
import { usageOf } from "./usage";

export interface LedgerServiceDeps {
  db: Db;
  store: HoldStore;
  admissions: CounterAdmissions;
  openTurns: OpenTurns;
  closings: ClosingQueue;
  usage: UsageQueue;
  budgets: BudgetCache;
  clock: Clock;
  log: Logger;
  holdTtlMs: number;
  leaseTtlMs: number;
  /** A lease takes at most 1/leaseShare of a ceiling's headroom. */
  leaseShare: number;
  /** How long Admit waits for spend leases to give back unspent headroom before refusing. */
  leaseWaitMs: number;
  /** Counts and times Admit and counts Lease; none when omitted. */
  metrics?: LedgerMetrics;
  /** The operator's fee schedule: with a fee, Admit holds each request's fee against the credit balance. Default none. */
  fees?: FeeSchedule;
  /** Serves AdmitStream; its owner ends the open streams before the server shuts down. */
  streams: CallStreamsServer;
}

/** The gRPC surface: decode and check the request, call the domain, encode the answer. */
export function ledgerService(deps: LedgerServiceDeps): ledger.LedgerServiceServer {
  const admitOne = async (req: ledger.AdmitRequest): Promise<ledger.AdmitResponse> => {
    if (!req.dryRun) required(req.requestId, "request_id");
    required(req.orgId, "org_id");
    nonNegative(req.worstCaseNanodollars, "worst_case_nanodollars");
    if (req.freshBudgets) deps.budgets.invalidate(req.orgId);
    const scope = requestScope(req);
    const admitted = deps.metrics?.startAdmit();
    const fees = deps.fees ?? NO_FEE;
    // Only while a fee is charged does the balance take part: otherwise Admit reads nothing more.
    const credit = chargesRequests(fees)
      ? await holdCredits(deps.db, {
          requestId: req.requestId,
          orgId: req.orgId,
          amount: requestFee(fees, req.worstCaseNanodollars),
          dryRun: req.dryRun,
          now: deps.clock.now(),
        })
      : undefined;
    if (credit && !credit.admitted) {
      admitted?.({ admitted: false, refusal: { scope: "credits", subjectId: req.orgId, message: "" } });
      return {
        admitted: false,
        holdId: "",
        limitWarning: "",
        refusal: {
          httpStatus: 402,
          code: "insufficient_credits",
          runStatus: "",
          scope: "credits",
          subjectId: req.orgId,
          message: insufficientCreditsSentence(credit),
        },
        purchasedNanodollars: credit.purchased,
      };
    }
    // A limit that refuses after the fee was held gives the hold back.
    const giveBack = () => (credit && !req.dryRun ? returnCreditHold(deps.db, req.requestId, deps.clock.now()) : Promise.resolve());
    const result = await admit(
      {
        requestId: req.requestId,
        orgId: req.orgId,
        ...scope,
        ceilings: req.ceilings.map(ceilingRule),
        worstCase: req.worstCaseNanodollars,
        isByok: req.isByok,
        dryRun: req.dryRun,
        runId: runIdOf(req.runId, "run_id"),
        leaseHoldId: turnLease(req),
      },
      deps,
    ).catch(async (err: unknown) => {
      await giveBack();
      throw err;
    });
    admitted?.(result);
    const purchasedNanodollars = credit?.purchased;
    if (!result.admitted) {
      await giveBack();
      const { httpStatus = 403, code = "budget_exceeded", runStatus = "", scope, subjectId, message } = result.refusal;
      return {
        admitted: false,
        holdId: "",
        limitWarning: "",
        refusal: { httpStatus, code, runStatus, scope, subjectId, message },
        purchasedNanodollars,
      };
    }
    return { admitted: true, holdId: result.holdId, limitWarning: result.warning, refusal: undefined, purchasedNanodollars };
  };
  return {
    admit: unaryHandler(admitOne, deps.log),
    // The same Admit, as messages on a stream (the gateway's path; see CallStreams).
    admitStream: deps.streams.handler(admitOne),

    closeHolds: unaryHandler(async (req: ledger.CloseHoldsRequest): Promise<ledger.CloseHoldsResponse> => {
      req.spends.forEach((s, i) => {
        required(s.holdId, `spends[${i}].hold_id`);
        required(s.requestId, `spends[${i}].request_id`);
        nonNegative(s.listCostNanodollars, `spends[${i}].list_cost_nanodollars`);
        nonNegative(s.billedCostNanodollars, `spends[${i}].billed_cost_nanodollars`);
      });
      const settlements = req.settlements.map((s, i) => {
        nonNegative(s.listCostNanodollars, `settlements[${i}].list_cost_nanodollars`);
        nonNegative(s.billedCostNanodollars, `settlements[${i}].billed_cost_nanodollars`);
        return { s, request: finishedRequest(s, `settlements[${i}].`) };
      });
      const releases = req.releases.map((r, i) => {
        nonNegative(r.keepNanodollars, `releases[${i}].keep_nanodollars`);
        nonNegative(r.spentNanodollars, `releases[${i}].spent_nanodollars`);
        return { r, request: finishedRequest({ ...r, isByok: false }, `releases[${i}].`) };
      });
      req.leaseCovers.forEach((c, i) => {
        required(c.holdId, `lease_covers[${i}].hold_id`);
        nonNegative(c.inFlightNanodollars, `lease_covers[${i}].in_flight_nanodollars`);
        nonNegative(c.spentNanodollars, `lease_covers[${i}].spent_nanodollars`);
        c.running.forEach((r, j) => {
          required(r.requestId, `lease_covers[${i}].running[${j}].request_id`);
          nonNegative(r.worstCaseNanodollars, `lease_covers[${i}].running[${j}].worst_case_nanodollars`);
        });
      });
      const answered = deps.metrics?.startClosing();
      const [, , recalled] = await Promise.all([
        deps.store.renew(
          req.renewHoldIds.filter((id) => id !== ""),
          new Date(deps.clock.now().getTime() + deps.holdTtlMs),
          req.renewTurnRequestIds.filter((id) => id !== ""),
        ),
        deps.store.cover(
          req.leaseCovers.map((c) => ({
            holdId: c.holdId,
            inFlight: c.inFlightNanodollars,
            spent: c.spentNanodollars,
            running: c.running.map((r) => ({
              requestId: r.requestId,
              worstCase: r.worstCaseNanodollars,
              startedAt: new Date(Number(r.startedAtMs)),
            })),
          })),
        ),
        // The gateway's leases in use that a waiting Admit wants back.
        deps.store.recalledAmong([...new Set([...req.renewHoldIds, ...req.leaseCovers.map((c) => c.holdId)])].filter((id) => id !== "")),
      ]);
      const unknown = await closeHolds(
        {
          spends: req.spends.map((s) => ({
            holdId: s.holdId,
            requestId: s.requestId,
            listCost: s.listCostNanodollars,
            billedCost: s.billedCostNanodollars,
          })),
          settlements: settlements.map(({ s, request }) => ({
            holdId: s.holdId,
            listCost: s.listCostNanodollars,
            billedCost: s.billedCostNanodollars,
            request,
          })),
          releases: releases.map(({ r, request }) => ({ holdId: r.holdId, keep: r.keepNanodollars, spent: r.spentNanodollars, request })),
        },
        deps,
      );
      answered?.();
      return { unknownHoldIds: unknown, recalledLeaseHoldIds: recalled };
    }, deps.log),

    lease: unaryHandler(async (req: ledger.LeaseRequest): Promise<ledger.LeaseResponse> => {
      required(req.leaseId, "lease_id");
      required(req.orgId, "org_id");
      if (req.freshBudgets) deps.budgets.invalidate(req.orgId);
      if (req.wantNanodollars <= 0n) invalidField("want_nanodollars", "must be positive");
      if (req.minNanodollars < 0n || req.minNanodollars > req.wantNanodollars) {
        invalidField("min_nanodollars", "must be between 0 and want_nanodollars");
      }
      const result = await grantLease(
        {
          leaseId: req.leaseId,
          orgId: req.orgId,
          ...requestScope(req),
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

    budgetSubjects: unaryHandler(async (req: ledger.BudgetSubjectsRequest): Promise<ledger.BudgetSubjectsResponse> => {
      required(req.orgId, "org_id");
      if (req.freshBudgets) deps.budgets.invalidate(req.orgId);
      const { workspaceIds, agents } = (await deps.budgets.get(req.orgId)).subjects;
      return { workspaceIds, agents };
    }, deps.log),

    creditTerms: unaryHandler(async (req: ledger.CreditTermsRequest): Promise<ledger.CreditTermsResponse> => {
      const fees = deps.fees ?? NO_FEE;
      return { feeBps: fees.feeBps, purchasedNanodollars: req.orgId === "" ? 0n : await purchasedOf(deps.db, req.orgId) };
    }, deps.log),

    workspaceSpend: unaryHandler(async (req: ledger.WorkspaceSpendRequest): Promise<ledger.WorkspaceSpendResponse> => {
      required(req.orgId, "org_id");
      req.workspaceIds.forEach((id, i) => {
        if (!WORKSPACE_ID.test(id)) invalidField(`workspace_ids[${i}]`, "expected a workspace id (ws_...)");
      });
      const [spend, budgets] = await Promise.all([
        workspaceSpendThisMonth(deps.db, req.orgId, req.workspaceIds, deps.clock.now()),
        workspaceBudgetsOf(deps.db, req.orgId, req.workspaceIds),
      ]);
      return {
        workspaces: req.workspaceIds.map((id) => ({
          workspaceId: id,
          spendThisMonthNanodollars: spend.get(id) ?? 0n,
          budgets: budgets
            .filter((b) => b.workspaceId === id)
            .map((b) => ({ window: WINDOW_OF[b.window], limitNanodollars: b.limit, includeByok: b.includeByok })),
        })),
      };
    }, deps.log),
  };
}

const WINDOW_OF: Record<WindowKind, ledger.Window> = {
  daily: ledger.Window.WINDOW_DAILY,
  weekly: ledger.Window.WINDOW_WEEKLY,
  monthly: ledger.Window.WINDOW_MONTHLY,
  lifetime: ledger.Window.WINDOW_LIFETIME,
};

/** The workspace and agent a request names ('' for none), checked as the gateway sends them. */
function requestScope(req: { workspaceId: string; agent: string }, prefix = ""): { workspaceId: string; agent: string } {
  if (req.workspaceId !== "" && !WORKSPACE_ID.test(req.workspaceId)) {
    invalidField(`${prefix}workspace_id`, "expected a workspace id (ws_...)");
  }
  if (req.agent !== "" && !AGENT_NAME.test(req.agent)) invalidField(`${prefix}agent`, "is not a valid agent name");
  return { workspaceId: req.workspaceId, agent: req.agent };
}

/**
 * The request a CloseHolds settlement or release names, for the record of spend per workspace and
 * agent; null when it names none (a lease's trim). An item without a hold id must name one: then
 * only that is recorded.
 */
function finishedRequest(
  r: {
    holdId: string;
    orgId: string;
    requestId: string;
    workspaceId: string;
    agent: string;
    isByok: boolean;
    runTurn?: ledger.RunTurn | undefined;
  },
  prefix: string,
): FinishedRequest | null {
  if (r.orgId === "" || r.requestId === "") {
    required(r.holdId, `${prefix}hold_id`);
    if (r.runTurn) invalidField(`${prefix}run_turn`, "needs org_id and request_id");
    return null;
  }
  const scope = requestScope(r, prefix);
  return { requestId: r.requestId, orgId: r.orgId, ...scope, isByok: r.isByok, ...(r.runTurn ? { runTurn: runTurnOf(r.runTurn, `${prefix}run_turn.`) } : {}) };
}

/** A turn's report, checked: a run id as Open answers them, counts that are not negative. */
function runTurnOf(t: ledger.RunTurn, prefix: string): RunTurnFacts {
  const runId = runIdOf(t.runId, `${prefix}run_id`);
  if (runId === "") invalidField(`${prefix}run_id`, "is required");
  const counts = { toolCalls: t.toolCalls, failedToolCalls: t.failedToolCalls, promptTokens: Number(t.promptTokens), cachedTokens: Number(t.cachedTokens) };
  for (const [field, n] of Object.entries({ tool_calls: counts.toolCalls, failed_tool_calls: counts.failedToolCalls, prompt_tokens: counts.promptTokens, cached_tokens: counts.cachedTokens })) {
    if (n < 0) invalidField(`${prefix}${field}`, "must not be negative");
  }
  return { runId, model: t.model, finishReason: t.finishReason, ...counts };
}

/** A run id ('' for none); anything else than what Open answers is a 400 naming `field`. */
/** A turn's lease: only with a run id, which it admitted the turn for. */
function turnLease(req: ledger.AdmitRequest): string {
  if (req.leaseHoldId !== "" && req.runId === "") invalidField("lease_hold_id", "only a turn of a run (run_id) names the lease that admitted it");
  return req.leaseHoldId;
}

function runIdOf(value: string, field: string): string {
  if (value !== "" && !RUN_ID.test(value)) invalidField(field, "expected a run id (run_...)");
  return value;
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
    subjectName: c.subjectName,
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
