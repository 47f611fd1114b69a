import { DomainError } from "@router/errors";
import { contentFilterRefusal, ContentFilters } from "../content-filter/content-filters";
import type { DispatchCredential } from "../provider-keys/dispatch-credential";
import { planRequestOf } from "../routing/plan-request";
import { withPresetParams } from "../routing/preset-params";
import { SpendAdmission } from "../spend/spend-admission";
import { worstCaseCost } from "../spend/worst-case";
import type { ChatContext } from "./chat-context";
import type { ChatDeps } from "./chat-deps";

/** Thrown for refusals the pipeline makes on purpose (budget, routing): recorded as `refused`. */
export class Refused extends DomainError {}

export interface Admitted {
  /** The organisation's enabled provider credentials, in the order dispatch tries them. */
  credentials: DispatchCredential[];
  /** A soft limit's warning for the `x-router-limit-warning` header; empty when none. */
  warning: string;
}

/**
 * Routes the request and reserves its worst case: sets the plan and the hold (or lease) on the
 * context, and throws `Refused` when a spend limit, a content filter or routing says no. The order
 * is a budget, then a filter, then routing: when a filter blocked or Plan refused, the limits are
 * still checked (without a hold), and a budget refusal is the one reported. The content filters of
 * the guardrails Plan names run here, over the messages, which never travel to routing; a redacting
 * filter rewrites what goes upstream.
 */
export class ChatAdmission {
  private readonly spend: SpendAdmission;

  constructor(
    private readonly deps: Pick<ChatDeps, "credentials" | "routing" | "ledger" | "leases" | "budgetSubjects" | "credits" | "contentFilters" | "closings">,
    /** Endpoints whose circuit is open in this gateway, for routing's sticky hoist. */
    private readonly openCircuits: () => string[] = () => [],
  ) {
    this.spend = new SpendAdmission(deps.ledger, deps.leases, deps.budgetSubjects, deps.credits);
    this.filters = deps.contentFilters ?? new ContentFilters();
  }

  private readonly filters: ContentFilters;

  async admit(ctx: ChatContext): Promise<Admitted> {
    const { caller } = ctx;
    // Router's fee on this request (0 unless the operator charges one): its record's billed cost.
    if (this.deps.credits) ctx.feeBps = await this.deps.credits.feeBps();
    const credentials = await this.deps.credentials.enabledFor(caller.orgId);
    const plan = await this.deps.routing.plan(planRequestOf(ctx, credentials, this.openCircuits()));
    ctx.plan = plan;
    // A named preset's sampling settings count in the worst case and go upstream.
    ctx.request = withPresetParams(ctx.request, plan.preset);
    const filtered = this.filters.apply(plan.contentFilters, ctx.request.messages);
    const blocked = contentFilterRefusal(filtered);
    if (filtered) {
      ctx.contentFilterLabels = filtered.verdict.sortedLabels();
      // What goes upstream is the redacted text; the caller's own copy is never echoed anyway.
      // The client's own body still holds what was redacted: only the translation may go upstream.
      if (filtered.messages !== ctx.request.messages) ctx.native = null;
      if (!blocked) ctx.request = { ...ctx.request, messages: filtered.messages };
    }
    const { request } = ctx;
    // Refused before routing (a filter binds first) or by routing: the limits are checked, no hold.
    const refused = blocked !== null || plan.refusal !== undefined;
    const decision = await this.spend.admit({
      requestId: ctx.id,
      orgId: caller.orgId,
      key: caller.key,
      agent: ctx.headers.agent,
      worstCase: refused ? 0n : worstCaseCost(request, plan.cascade, ctx.promptTokens),
      checkOnly: refused,
      runId: request.run_id ?? null,
      guardrailBudgets: plan.guardrailBudgets,
    });
    ctx.holdKnown = true;
    if (!decision.admitted) {
      throw new Refused(decision.code as DomainError["code"], decision.message, {
        status: decision.httpStatus,
        // A run that takes no turn names its status (409).
        details: { scope: decision.scope, ...(decision.runStatus ? { status: decision.runStatus } : {}) },
      });
    }
    ctx.holdId = decision.holdId;
    // Renewed until the request's record is published, so the ledger sees this gateway is alive.
    this.deps.closings.renew(decision.holdId);
    ctx.lease = decision.lease;
    // The turn was reserved on the run only when the request goes on to dispatch.
    if (!refused) ctx.runId = request.run_id ?? null;
    // A turn with no hold of its own (a lease admitted it on the budgets) is renewed by request id.
    if (ctx.runId !== null && decision.holdId === "") this.deps.closings.renewTurn(ctx.id);
    if (blocked) throw new Refused("content_filtered", blocked.message, { status: 403, details: { labels: blocked.labels } });
    if (plan.refusal) {
      throw new Refused(plan.refusal.code as DomainError["code"], plan.refusal.message, {
        status: plan.refusal.httpStatus || 404,
        details: { unsatisfied_filters: plan.refusal.unsatisfiedFilters },
      });
    }
    if (!plan.cascade.length) {
      throw new Refused("no_route", "no endpoint can serve this request", { details: { unsatisfied_filters: [] } });
    }
    return { credentials, warning: decision.warning };
  }
}
