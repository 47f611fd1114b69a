import { fromUsd } from "@router/money";
import type { routing } from "@router/proto";
import type { ChatContext } from "../chat/chat-context";
import type { DispatchCredential } from "../provider-keys/dispatch-credential";
import type { ChatRequest } from "@router/chat-request";

/**
 * Which providers the organisation's credentials reach, and for a cloud in which regions: a cloud
 * credential serves its own region only, so Plan leaves out the endpoints none of them can serve
 * (the draw would otherwise weigh endpoints the cascade must then skip).
 */
export function credentialScope(credentials: readonly DispatchCredential[]): CredentialScope {
  // The credential source hands out one array per organisation until it reloads: work it out once.
  let scope = scopes.get(credentials);
  if (!scope) scopes.set(credentials, (scope = scopeOf(credentials)));
  return scope;
}

type CredentialScope = Pick<routing.PlanRequest, "byokProviders" | "credentialRegions">;
const scopes = new WeakMap<readonly DispatchCredential[], CredentialScope>();

function scopeOf(credentials: readonly DispatchCredential[]): CredentialScope {
  const providers = new Set<string>();
  const regions = new Map<string, Set<string>>();
  for (const c of credentials) {
    providers.add(c.providerSlug);
    const region = c.cloud?.region;
    if (!region) continue;
    let set = regions.get(c.providerSlug);
    if (!set) regions.set(c.providerSlug, (set = new Set()));
    set.add(region);
  }
  return {
    byokProviders: [...providers],
    credentialRegions: [...regions].map(([providerSlug, set]) => ({ providerSlug, regions: [...set].sort() })),
  };
}

/**
 * What routing's `Plan` is asked for one chat request: its model chain, routing fields and
 * preferences, the providers (and clouds' regions) the organisation holds credentials for, and the
 * endpoints whose circuit is open in this gateway.
 */
export function planRequestOf(ctx: ChatContext, credentials: readonly DispatchCredential[], openCircuits: string[]): routing.PlanRequest {
  const { request } = ctx;
  return {
    orgId: ctx.caller.orgId,
    model: request.model ?? "",
    models: request.models ?? [],
    ...credentialScope(credentials),
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
