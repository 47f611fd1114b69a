import { invalid } from "@router/errors";
import { toUsd } from "@router/money";
import type { routing } from "@router/proto";
import { Router, type Request, type Response } from "express";
import { callerMiddleware, requireCaller, type ResolveCaller } from "../auth/authenticate";
import { usesSession } from "../auth/session-caller";
import { cookiesOf, SESSION_COOKIE, sessionTokenHash } from "@router/http-kit";
import { newChatContext } from "../chat/chat-context";
import { chatCompletionsIngress } from "../ingress/chat-completions";
import type { ChatDeps } from "../chat/chat-deps";
import { parseChatRequest } from "@router/chat-request";
import { previewBodySchema } from "@router/inference-api";
import { readRouterHeaders } from "../request-model/router-headers";
import type { CredentialRateLimit } from "../rate-limits/rate-limit-middleware";
import { contentFilterRefusal, type ContentFilters } from "../content-filter/content-filters";
import { SpendAdmission } from "../spend/spend-admission";
import { planRequestOf } from "./plan-request";
import { withPresetParams } from "./preset-params";

export const ROUTE_PREVIEW_PATH = "/v1/routing/preview";

const PREVIEW_FIELDS = new Set(Object.keys(previewBodySchema.shape));

/** A cascade entry as the preview shows it: which endpoint, at which list price. */
function candidateView(c: routing.Candidate) {
  return {
    model: c.modelId,
    provider: c.providerSlug,
    endpoint_id: c.endpointId,
    model_rank: c.modelRank,
    quantization: c.quantization || null,
    context_length: c.contextLength || null,
    pricing: c.price
      ? { prompt_per_million: toUsd(c.price.promptPerMillion), completion_per_million: toUsd(c.price.completionPerMillion) }
      : null,
    pinned: c.pinned,
  };
}

/**
 * `POST /v1/routing/preview`: the chat route's gates in their order (the key, the spend limits in
 * their precedence, routing), with no side effect: Plan has none (pins are written from completed
 * requests), the limits are asked as a check (no hold, no lease), no request is recorded and no
 * provider is contacted. A refusal is answered in the body (`would_dispatch: false`), not as an error.
 */
export function previewRoutes(deps: {
  /** An inference key, or a dashboard session (the dashboard's playground previews as the signed-in person). */
  resolveCaller: ResolveCaller;
  chat: Pick<ChatDeps, "credentials" | "routing" | "ledger" | "budgetSubjects" | "credits" | "clock"> & { contentFilters: ContentFilters };
  limit: CredentialRateLimit;
  openCircuits: () => string[];
}): Router {
  const router = Router();
  // While a fee is charged the credit balance is one of the gates too (checked, nothing held).
  const spend = new SpendAdmission(deps.chat.ledger, undefined, deps.chat.budgetSubjects, deps.chat.credits);
  router.post(ROUTE_PREVIEW_PATH, callerMiddleware(deps.resolveCaller), async (req: Request, res: Response) => {
    const caller = requireCaller(res);
    // Counted per credential: a key by its hash, a session by its token's (as its management routes are).
    const session = usesSession(req) ? cookiesOf(req)[SESSION_COOKIE] : undefined;
    await deps.limit(session ? { id: `session:${sessionTokenHash(session)}`, per: "session" } : { id: caller.key.hash, per: "key" }, res);
    const body: unknown = req.body;
    if (body === null || typeof body !== "object" || Array.isArray(body)) throw invalid("body", "expected a JSON object");
    for (const field of Object.keys(body)) {
      if (!PREVIEW_FIELDS.has(field)) throw invalid(field, "not a field of a route preview");
    }
    const supplied = body as Record<string, unknown>;
    const hasMessages = supplied.messages !== undefined;
    // The chat route's own schema checks every field it shares; messages stand in when omitted.
    const request = parseChatRequest(hasMessages ? supplied : { ...supplied, messages: [{ role: "user", content: "" }] });
    const ctx = newChatContext(caller, readRouterHeaders(req), request, deps.chat.clock.now(), performance.now(), chatCompletionsIngress);
    const credentials = await deps.chat.credentials.enabledFor(caller.orgId);
    const plan = await deps.chat.routing.plan(planRequestOf(ctx, credentials, deps.openCircuits()));
    ctx.request = withPresetParams(ctx.request, plan.preset);
    const filtered = hasMessages ? deps.chat.contentFilters.apply(plan.contentFilters, ctx.request.messages) : null;
    const decision = await spend.admit({
      requestId: ctx.id,
      orgId: caller.orgId,
      key: caller.key,
      agent: ctx.headers.agent,
      worstCase: 0n,
      checkOnly: true,
      // A preview names no run (no run reservation either way).
      runId: null,
      guardrailBudgets: plan.guardrailBudgets,
    });
    const budgetRefusal = decision.admitted
      ? null
      : { status: decision.httpStatus, code: decision.code, message: decision.message, scope: decision.scope };
    const routingRefusal =
      plan.refusal !== undefined
        ? { status: plan.refusal.httpStatus || 404, code: plan.refusal.code, message: plan.refusal.message, unsatisfied_filters: plan.refusal.unsatisfiedFilters }
        : plan.cascade.length === 0
          ? { status: 404, code: "no_route", message: "no endpoint can serve this request", unsatisfied_filters: [] }
          : null;
    const blocked = contentFilterRefusal(filtered);
    const filterRefusal = blocked ? { status: 403, code: "content_filtered", ...blocked } : null;
    // The chat route's precedence: a budget, then a content filter, then routing.
    const refusal = budgetRefusal ?? filterRefusal ?? routingRefusal;
    const cascade = plan.cascade.map(candidateView);
    res.json({
      data: {
        requested: request.model ?? "",
        strategy: plan.strategy || (request.models?.length ? "fallback" : "direct"),
        would_dispatch: refusal === null,
        limit_warning: decision.admitted && decision.warning ? decision.warning : null,
        refusal,
        ordering: plan.ordering || "deterministic",
        routing_seed: plan.routingSeed || null,
        winner: refusal === null ? (cascade[0] ?? null) : null,
        cascade,
        beyond_fallback_depth: plan.beyondFallbackDepth,
        endpoints: { in_cascade: cascade.length, refused: plan.refused.length, beyond_fallback_depth: plan.beyondFallbackDepth },
        refused: plan.refused.map((r) => ({ model: r.modelId, provider: r.providerSlug, endpoint_id: r.endpointId, constraint: r.constraint })),
        unsatisfied_filters: plan.refusal?.unsatisfiedFilters ?? [],
        unresolved_models: plan.unresolvedModels,
        guardrails: { applied: plan.guardrailsApplied },
        // Labels only, never the matched text; null without messages, never a fabricated allow.
        content_filter: hasMessages ? { labels: filtered?.verdict.sortedLabels() ?? [] } : null,
        sticky: plan.sticky?.mode
          ? {
              mode: plan.sticky.mode,
              source: plan.sticky.source,
              pins: plan.sticky.pins.map((p) => ({ model: p.modelId, endpoint_id: p.endpointId, hoisted: p.hoisted, not_hoisted_reason: p.notHoistedReason || null })),
            }
          : null,
      },
    });
  });
  return router;
}
