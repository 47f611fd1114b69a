import { fromUsd } from "@router/money";
import type { routing } from "@router/proto";
import type { ChatContext } from "../chat/chat-context";
import type { ChatRequest } from "../request-model/request-schema";

/**
 * What routing's `Plan` is asked for one chat request: its model chain, routing fields and
 * preferences, the providers the organisation holds credentials for, and the endpoints whose
 * circuit is open in this gateway.
 */
export function planRequestOf(ctx: ChatContext, byokProviders: string[], openCircuits: string[]): routing.PlanRequest {
  const { request } = ctx;
  return {
    orgId: ctx.caller.orgId,
    model: request.model ?? "",
    models: request.models ?? [],
    byokProviders,
    accountFallbackModels: [],
    provider: request.provider ? providerPreferences(request.provider) : undefined,
    sessionId: request.session_id ?? "",
    promptCacheKey: request.prompt_cache_key ?? "",
    headerSessionId: ctx.headers.sessionId ?? "",
    routingStability: request.routing_stability ?? "",
    routingSeed: request.routing_seed ?? "",
    openCircuits,
    // Who asks, as guardrail assignments name them.
    keyHash: ctx.caller.key.hash,
    workspaceId: ctx.caller.key.workspaceId ?? "",
    memberUserId: ctx.caller.memberUserId ?? "",
    // Plan filters on these only under `provider.require_parameters`; hints are the per-attempt fit's.
    requiredParameters: request.tools !== undefined && request.tools.length > 0 ? ["tools"] : [],
    // Embeddings route to embedding models only; every other ingress asks for a chat completion.
    operation: ctx.ingress.name === "embeddings" ? "embeddings" : "",
  };
}

function providerPreferences(p: NonNullable<ChatRequest["provider"]>): routing.ProviderPreferences {
  return {
    order: p.order ?? [],
    only: p.only ?? [],
    ignore: p.ignore ?? [],
    allowFallbacks: p.allow_fallbacks,
    requireParameters: p.require_parameters,
    dataCollection: p.data_collection ?? "",
    zdr: p.zdr,
    sort: p.sort ?? "",
    quantizations: p.quantizations ?? [],
    maxPricePromptPerMillion: p.max_price?.prompt === undefined ? undefined : fromUsd(p.max_price.prompt),
    maxPriceCompletionPerMillion: p.max_price?.completion === undefined ? undefined : fromUsd(p.max_price.completion),
  };
}
