import type { routing } from "@router/proto";
import type { CatalogSnapshot, RankedEndpoint } from "../catalog/catalog-snapshot";
import { NEVER_SET, type RoutingDefaults } from "../defaults/routing-defaults";
import { HealthSnapshot } from "../health/health-snapshot";
import { resolveModel, type ResolvedModel } from "./model-resolution";

/** Models tried for one request: the request's `model`, its `models`, then account fallbacks. */
export const FALLBACK_DEPTH = 3;

/**
 * Turns a request's model chain into the ordered cascade of endpoints the gateway may dispatch
 * to. Pure and synchronous over in-memory snapshots: this is the hot path.
 *
 * The chain is the request's `model` and `models` (or, when it names none, the account's default
 * model), then the account's fallback models, then any `account_fallback_models` the request
 * carries; repeated and blank entries dropped, cut to three distinct models. `account` is null
 * when the account's defaults could not be read.
 *
 * Order within a model is cheapest first, then provider slug (see `priceKey`), except that
 * endpoints failing recently (`HealthSnapshot.isDegraded`) go after the model's healthy ones, in
 * the same relative order: a demotion, never a removal, so a model served only by failing
 * endpoints is still tried.
 */
export function plan(
  req: routing.PlanRequest,
  catalog: CatalogSnapshot,
  health: HealthSnapshot = EMPTY_HEALTH,
  account: RoutingDefaults | null = NEVER_SET,
): routing.PlanResponse {
  let requested = distinctEntries([req.model, ...req.models]);
  if (requested.length === 0) {
    if (account === null) {
      return refuse("direct", [], {
        httpStatus: 503,
        code: "router.routing_unavailable",
        message: "model: the account default model cannot be read right now; name a model or retry",
        unsatisfiedFilters: [],
      });
    }
    if (!account.defaultModel) {
      return refuse("direct", [], {
        httpStatus: 400,
        code: "invalid_request",
        message: "model: required; name a model (or a models chain) or set an account default model",
        unsatisfiedFilters: [],
      });
    }
    requested = [account.defaultModel];
  }
  const chain = distinctEntries([...requested, ...(account?.fallbackModels ?? []), ...req.accountFallbackModels]);

  const { resolved, unresolved } = resolveChain(chain, catalog);
  const strategy = strategyOf(requested, catalog);
  if (resolved.length === 0) {
    return refuse(strategy, unresolved, {
      httpStatus: 404,
      code: "model_not_found",
      message: `model not found: ${unresolved.join(", ")}`,
      unsatisfiedFilters: [],
    });
  }

  const byok = new Set(req.byokProviders);
  const cascade: routing.Candidate[] = [];
  let beyondFallbackDepth = 0;
  resolved.forEach((model, index) => {
    const usable = healthyFirst(
      catalog.endpointsOf(model.modelId).filter((r) => byok.has(r.provider.slug)),
      health,
    );
    if (index >= FALLBACK_DEPTH) beyondFallbackDepth += usable.length;
    else for (const r of usable) cascade.push(candidate(r, index + 1));
  });

  if (cascade.length === 0) {
    return refuse(strategy, unresolved, noCredentialRefusal(resolved.slice(0, FALLBACK_DEPTH), catalog), beyondFallbackDepth);
  }
  return { cascade, refusal: undefined, strategy, beyondFallbackDepth, unresolvedModels: unresolved };
}

const EMPTY_HEALTH = HealthSnapshot.empty();

// Describes what the request asked for; the account's fallbacks are a safety net behind it and do
// not turn a single-model request into a "fallback" one.
function strategyOf(requested: string[], catalog: CatalogSnapshot): string {
  if (requested.length > 1) return "fallback";
  const only = requested[0];
  return only !== undefined && resolveModel(only, catalog)?.alias ? "latest" : "direct";
}

// A stable partition keeps the price order inside both groups.
function healthyFirst(endpoints: RankedEndpoint[], health: HealthSnapshot): RankedEndpoint[] {
  if (!health.anyDegraded) return endpoints;
  const healthy: RankedEndpoint[] = [];
  const degraded: RankedEndpoint[] = [];
  for (const r of endpoints) (health.isDegraded(r.endpoint.id) ? degraded : healthy).push(r);
  return degraded.length === 0 ? endpoints : healthy.concat(degraded);
}

function distinctEntries(entries: string[]): string[] {
  const out: string[] = [];
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry && !out.includes(entry)) out.push(entry);
  }
  return out;
}

// Distinct models count toward the depth; an entry that names nothing takes no slot.
function resolveChain(chain: string[], catalog: CatalogSnapshot): { resolved: ResolvedModel[]; unresolved: string[] } {
  const resolved: ResolvedModel[] = [];
  const unresolved: string[] = [];
  for (const entry of chain) {
    const model = resolveModel(entry, catalog);
    if (!model) unresolved.push(entry);
    else if (!resolved.some((r) => r.modelId === model.modelId)) resolved.push(model);
  }
  return { resolved, unresolved };
}

function candidate(r: RankedEndpoint, modelRank: number): routing.Candidate {
  const { endpoint, provider } = r;
  return {
    modelId: endpoint.modelId,
    providerSlug: provider.slug,
    endpointId: endpoint.id,
    apiFamily: provider.apiFamily,
    baseUrl: r.baseUrl,
    upstreamModel: endpoint.upstreamModel,
    price: {
      promptPerMillion: endpoint.price.promptPerMillion,
      completionPerMillion: endpoint.price.completionPerMillion,
      cachedPromptPerMillion: endpoint.price.cachedPromptPerMillion ?? 0n,
      priceVersionId: endpoint.price.priceVersionId,
    },
    maxOutputTokens: endpoint.maxOutputTokens ?? 0,
    contextLength: endpoint.contextLength,
    quantization: endpoint.quantization ?? "",
    modelRank,
    // The snapshot's own array, not a copy: read-only by contract and shared per catalog revision.
    supportedParameters: endpoint.supportedParameters,
  };
}

function noCredentialRefusal(models: ResolvedModel[], catalog: CatalogSnapshot): routing.Refusal {
  const ids = models.map((m) => m.modelId);
  const providers: string[] = [];
  for (const id of ids) {
    for (const { provider } of catalog.endpointsOf(id)) {
      const label = `${provider.name} (${provider.slug})`;
      if (!providers.includes(label)) providers.push(label);
    }
  }
  const subject = ids.length === 1 ? ids[0] : ids.join(", ");
  const message =
    providers.length === 0
      ? `no provider currently serves ${subject}`
      : `no enabled provider credential can serve ${subject}: add a provider key for one of the providers ` +
        `serving ${ids.length === 1 ? "it" : "them"}: ${providers.join(", ")}`;
  return { httpStatus: 404, code: "no_route", message, unsatisfiedFilters: ["byok_credential"] };
}

function refuse(
  strategy: string,
  unresolvedModels: string[],
  refusal: routing.Refusal,
  beyondFallbackDepth = 0,
): routing.PlanResponse {
  return { cascade: [], refusal, strategy, beyondFallbackDepth, unresolvedModels };
}
