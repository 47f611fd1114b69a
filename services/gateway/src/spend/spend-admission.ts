import type { Nanodollars } from "@router/money";
import type { routing } from "@router/proto";
import type { CallerKey } from "../auth/caller";
import { guardrailCeilings, keyCeilings } from "./key-ceilings";
import type { LedgerPort } from "./ledger-port";
import type { BudgetSubjects } from "./budget-subjects";
import type { CreditStanding } from "./credit-standing";
import { SpendLeases, type LeaseTicket } from "./spend-leases";

export interface SpendRequest {
  requestId: string;
  orgId: string;
  key: CallerKey;
  /** The agent named in `X-Router-Agent`, if any: its budgets count the request. */
  agent: string | null;
  /** The request's worst-case list cost over its cascade. */
  worstCase: Nanodollars;
  /** Routing already refused: the limits are checked (a budget refusal wins) but nothing is reserved. */
  checkOnly: boolean;
  /** The run the request is a turn of (`run_id`), if any: the ledger checks and reserves on it too. */
  runId: string | null;
  /** The budgets of the guardrails that apply to the key (Plan's `guardrail_budgets`). */
  guardrailBudgets: readonly routing.GuardrailBudget[];
}

export type SpendDecision =
  | {
      admitted: true;
      /** The ledger hold to settle or release; empty when nothing was reserved there. */
      holdId: string;
      /** Set instead of `holdId` when a spend lease admitted the request. */
      lease: LeaseTicket | null;
      /** A soft limit's warning for the `x-router-limit-warning` header; empty when none. */
      warning: string;
    }
  | {
      admitted: false;
      code: string;
      message: string;
      httpStatus: number;
      scope: string;
      /** For a run that takes no turn (409): its status. */
      runStatus: string;
    };

/** A request no limit counts: admitted, nothing reserved anywhere. */
const UNLIMITED: SpendDecision = { admitted: true, holdId: "", lease: null, warning: "" };

/**
 * Whether a request may spend, and where its worst case is reserved: from a spend lease this
 * process holds on its key's ceiling and the budgets of its workspace and agent, else by the
 * ledger's Admit, which decides the same limits. A turn of a run admitted from a lease still asks
 * Admit, for the run alone.
 */
export class SpendAdmission {
  constructor(
    private readonly ledger: LedgerPort,
    private readonly leases: SpendLeases | undefined,
    /** Which budgets exist: without it every request asks Admit. */
    private readonly budgets?: BudgetSubjects,
    /** Whether a fee is charged from credits: then every request asks Admit. Without it none is assumed. */
    private readonly credits?: CreditStanding,
  ) {}

  async admit(req: SpendRequest): Promise<SpendDecision> {
    // Every request is BYOK, and a key ceiling or guardrail budget without include_byok counts none.
    // The workspace's and the agent's budgets are the ledger's: it is asked unless nothing can count
    // the request. The key's ceiling comes first: it is named first when both refuse.
    const ceilings = [...keyCeilings(req.key), ...guardrailCeilings(req.guardrailBudgets, req.key)].filter((c) => c.includeByok);
    // While a fee is charged, the credit balance counts every request: Admit holds its fee (and
    // refuses them all while the balance is negative), in the same call that reserves its limits.
    const charged = (this.credits ? await this.credits.feeBps() : 0) > 0;
    // A turn of a run always asks Admit (the run is the ledger's); any other request skips it when
    // nothing counts it, or takes a lease.
    const turn = req.runId !== null;
    // Whether a budget may count the request matters only when no key ceiling does; without
    // BudgetSubjects one may, and Admit decides.
    const onlyBudgets = ceilings.length === 0;
    const budgeted = onlyBudgets && this.budgets && !charged ? await this.budgets.mayCount(req.orgId, req.key.workspaceId, req.agent) : true;
    if (!turn && onlyBudgets && !budgeted) return UNLIMITED;
    const scope = { orgId: req.orgId, workspaceId: req.key.workspaceId ?? "", agent: req.agent ?? "" };
    // A lease reserves on the key's ceilings and on every budget the ledger finds counting; with no
    // key ceiling it is asked for only where this gateway knows of a budget. A lease cannot hold each
    // request's fee against the balance, so none is taken while a fee is charged.
    const leasable = !charged && (!onlyBudgets || (budgeted && this.budgets !== undefined)) && SpendLeases.serves(ceilings);
    const ticket = this.leases && leasable && !req.checkOnly ? await this.leases.admit({ ...scope, ceilings }, req.worstCase, req.requestId) : null;
    if (ticket && !turn) return { admitted: true, holdId: "", lease: ticket, warning: "" };
    const admission = await this.ledger
      .admit({
        requestId: req.requestId,
        ...scope,
        // A turn the lease admitted is reserved on the run alone.
        ceilings,
        worstCaseNanodollars: req.worstCase,
        isByok: true,
        dryRun: req.checkOnly,
        runId: req.runId ?? "",
        leaseHoldId: ticket?.lease.holdId ?? "",
      })
      .catch((err: unknown) => {
        if (ticket) this.leases?.finish(ticket, null);
        throw err;
      });
    if (admission.purchasedNanodollars !== undefined) this.credits?.noteAdmission(req.orgId, admission.purchasedNanodollars);
    if (admission.admitted) return { admitted: true, holdId: admission.holdId, lease: ticket, warning: admission.limitWarning };
    if (ticket) this.leases?.finish(ticket, null);
    const r = admission.refusal;
    return {
      admitted: false,
      code: r?.code || "budget_exceeded",
      message: r?.message || "a spend limit refused this request",
      httpStatus: r?.httpStatus || 403,
      scope: r?.scope || "key",
      runStatus: r?.runStatus ?? "",
    };
  }
}
