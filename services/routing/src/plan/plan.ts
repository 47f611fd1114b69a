import type { routing } from "@router/proto";
import type { CatalogSnapshot, RankedEndpoint } from "../catalog/catalog-snapshot";
import { NEVER_SET, type RoutingDefaults } from "../defaults/routing-defaults";
import { appliedGuardrails, type RoutingGuardrail } from "../guardrails/guardrail-stages";
import { HealthSnapshot } from "../health/health-snapshot";
import type { PrivacyPolicy } from "../privacy/privacy-policy";
import { pinRefOf, type StickyKey } from "../sticky/sticky-key";
import { BYOK_CREDENTIAL, filterStages, passing, type FilterStage } from "./filter-stages";
import { resolveModel, type ResolvedModel } from "./model-resolution";
import { orderByPreference } from "./provider-preferences";
import { isSort, rankEndpoints, type Sort } from "./ranking";
import { seededRandom } from "./seeded-draw";
import { VARIANT_RULES } from "./variants";

/** Models tried for one request: the request's `model`, its `models`, then account fallbacks. */
export const FALLBACK_DEPTH = 3;

/** What a plan is computed over besides the request; all in memory. */
export interface PlanInputs {
  catalog: CatalogSnapshot;
  health?: HealthSnapshot;
  /** The account's routing defaults; null when they could not be read. */
  account?: RoutingDefaults | null;
  /** Seeds the weighted draw: the request's `routing_seed`, or a fresh one the caller drew. */
  seed: string;
  /** The request's sticky key, and the pins held for it (model id to endpoint id). */
  sticky?: StickyKey | null;
  pins?: ReadonlyMap<string, string>;
  /** The guardrails assigned to the request's key and member; null when they cannot be read. */
  guardrails?: readonly RoutingGuardrail[] | null;
  /** The organisation's privacy policy; none when absent. */
  privacy?: PrivacyPolicy;
  /** The preset the request named, already merged into the request. */
  preset?: routing.PresetApplied;
}

/**
 * Turns a request (a preset already merged in) into the ordered cascade of endpoints the gateway
 * may dispatch to. Pure and synchronous over in-memory snapshots: this is the hot path.
 *
 * 1. Chain: the request's `model` and `models` (or, when it names none, the account's default
 *    model), then the account's fallback models, then any `account_fallback_models` the request
 *    carries; repeated and blank entries dropped. Entries resolve to catalog rows (variants,
 *    `~` aliases); unknown ones go to `unresolved_models` and take no place.
 * 2. Each model's endpoints pass the filter stages (filter-stages.ts); each one removed is
 *    recorded in `refused` with the first constraint that removed it.
 * 3. The first three distinct models (the fallback depth) are ranked (ranking.ts): by the sort
 *    that applies (the account's locked sort, a `:floor`/`:nitro` variant, the request's
 *    `provider.sort`, the account's default sort) or else by the weighted draw seeded by `seed`;
 *    then the providers in `provider.order` go first, in that order.
 * 4. Sticky: a model's pinned endpoint is moved to the front of its endpoints (`sticky` while the
 *    asking gateway's circuit for it is closed, `pinned` regardless; `adaptive` reads no pins).
 * 5. The endpoints of later models are counted in `beyond_fallback_depth`.
 */
export function plan(req: routing.PlanRequest, inputs: PlanInputs): routing.PlanResponse {
  const { catalog } = inputs;
  const health = inputs.health ?? EMPTY_HEALTH;
  const account = inputs.account === undefined ? NEVER_SET : inputs.account;
  const answer = newAnswer(inputs);

  let requested = distinctEntries([req.model, ...req.models]);
  if (requested.length === 0) {
    if (account === null) {
      return refuse(answer, {
        httpStatus: 503,
        code: "router.routing_unavailable",
        message: "model: the account default model cannot be read right now; name a model or retry",
        unsatisfiedFilters: [],
      });
    }
    if (!account.defaultModel) {
      return refuse(answer, {
        httpStatus: 400,
        code: "invalid_request",
        message: "model: required; name a model (or a models chain) or set an account default model",
        unsatisfiedFilters: [],
      });
    }
    requested = [account.defaultModel];
  }
  const chain = distinctEntries([...requested, ...(account?.fallbackModels ?? []), ...req.accountFallbackModels]);
  answer.strategy = strategyOf(requested, catalog);

  if (inputs.guardrails === null) {
    // Guardrails restrict: routing without them could reach what they forbid.
    return refuse(answer, {
      httpStatus: 503,
      code: "router.routing_unavailable",
      message: "guardrails: the guardrails of this key cannot be read right now; retry",
      unsatisfiedFilters: [],
    });
  }
  const stages = filterStages(req, inputs.guardrails, inputs.privacy);
  const resolved = resolveChain(chain, requested.length, catalog, stages);
  const { unresolved } = resolved;
  answer.unresolvedModels = unresolved;
  if (resolved.models.length === 0) {
    return refuse(answer, { httpStatus: 404, code: "model_not_found", message: `model not found: ${unresolved.join(", ")}`, unsatisfiedFilters: [] });
  }
  const embeddings = req.operation === "embeddings";
  const wrongKind = resolved.models.slice(0, resolved.fromRequest).find((m) => catalog.isEmbeddingModel(m.modelId) !== embeddings);
  if (wrongKind) return refuse(answer, wrongKindRefusal(wrongKind.modelId, embeddings));
  // The account's fallback models serve chat: an embeddings request leaves them out, and the other way round.
  const models = resolved.models.filter((m) => catalog.isEmbeddingModel(m.modelId) === embeddings);

  const requestSort = sortOf(req, account);
  answer.sort = requestSort ?? "";
  const openCircuits = new Set(req.openCircuits);
  const preferredOrder = req.provider?.order ?? [];
  let random: (() => number) | undefined;
  const draw = () => (random ??= seededRandom(inputs.seed))();
  let sampled = false;

  models.forEach((model, index) => {
    const usable = passing(catalog.endpointsOf(model.modelId), model, stages, index < FALLBACK_DEPTH ? answer.refused : null);
    if (index >= FALLBACK_DEPTH) {
      answer.beyondFallbackDepth += usable.length;
      return;
    }
    const sort = (account?.lockSort ? null : variantSort(model)) ?? requestSort;
    if (sort === null && usable.length >= 2) sampled = true;
    const ranked = orderByPreference(rankEndpoints(usable, sort, health, draw), preferredOrder);
    const hoisted = hoistPin(ranked, model.modelId, inputs, openCircuits, answer.sticky);
    for (const r of ranked) answer.cascade.push(candidate(r, index + 1, r === hoisted && inputs.sticky?.mode === "pinned"));
  });
  answer.ordering = sampled ? "sampled" : "deterministic";
  markPinsOutsideTheCascade(answer.sticky);

  if (answer.cascade.length === 0) return refuse(answer, noRouteRefusal(models.slice(0, FALLBACK_DEPTH), answer.refused, catalog));
  return answer;
}

const EMPTY_HEALTH = HealthSnapshot.empty();

function newAnswer(inputs: PlanInputs): routing.PlanResponse & { sticky: routing.Sticky } {
  const key = inputs.sticky ?? null;
  return {
    cascade: [],
    refusal: undefined,
    strategy: "direct",
    beyondFallbackDepth: 0,
    unresolvedModels: [],
    ordering: "deterministic",
    routingSeed: inputs.seed,
    sticky: {
      mode: key?.mode ?? "",
      source: key?.source ?? "",
      pins: [...(inputs.pins ?? [])].map(([modelId, endpointId]) => ({ modelId, endpointId, hoisted: false, notHoistedReason: "" })),
      pinRef: key ? pinRefOf(key) : "",
    },
    preset: inputs.preset,
    refused: [],
    sort: "",
    ...appliedGuardrails(inputs.guardrails),
  };
}

/**
 * The sort for the request as a whole: the account's default sort when it is locked, else the
 * request's `provider.sort`, else the account's default sort; null means the weighted draw.
 */
function sortOf(req: routing.PlanRequest, account: RoutingDefaults | null): Sort | null {
  const own = req.provider?.sort;
  if (account?.lockSort) return account.defaultSort;
  if (isSort(own)) return own;
  return account?.defaultSort ?? null;
}

// `:floor` and `:nitro` are sorts of their own model; a locked account sort overrides them too.
function variantSort(model: ResolvedModel): Sort | null {
  return model.variant ? (VARIANT_RULES[model.variant].sort ?? null) : null;
}

/** Moves the model's pinned endpoint to the front of `ranked`; answers it when it did. */
function hoistPin(
  ranked: RankedEndpoint[],
  modelId: string,
  inputs: PlanInputs,
  openCircuits: ReadonlySet<string>,
  sticky: routing.Sticky,
): RankedEndpoint | null {
  const pin = sticky.pins.find((p) => p.modelId === modelId);
  if (!pin || !inputs.sticky || inputs.sticky.mode === "adaptive") return null;
  const at = ranked.findIndex((r) => r.endpoint.id === pin.endpointId);
  if (at < 0) {
    pin.notHoistedReason = "not_in_cascade";
    return null;
  }
  if (inputs.sticky.mode === "sticky" && openCircuits.has(pin.endpointId)) {
    pin.notHoistedReason = "circuit_open";
    return null;
  }
  const [hoisted] = ranked.splice(at, 1);
  if (!hoisted) return null;
  ranked.unshift(hoisted);
  pin.hoisted = true;
  return hoisted;
}

// A pin for a model that did not take part (another model, or past the depth) was not hoisted.
function markPinsOutsideTheCascade(sticky: routing.Sticky): void {
  for (const pin of sticky.pins) if (!pin.hoisted && !pin.notHoistedReason) pin.notHoistedReason = "not_in_cascade";
}

// Describes what the request asked for; the account's fallbacks are a safety net behind it and do
// not turn a single-model request into a "fallback" one.
function strategyOf(requested: string[], catalog: CatalogSnapshot): string {
  if (requested.length > 1) return "fallback";
  const only = requested[0];
  return only !== undefined && resolveModel(only, catalog)?.alias ? "latest" : "direct";
}

function distinctEntries(entries: string[]): string[] {
  const out: string[] = [];
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry && !out.includes(entry)) out.push(entry);
  }
  return out;
}

/**
 * Resolves the chain to distinct models. A listed row named with a variant suffix that cannot
 * serve the request (nothing of it passes the filters) gives way to its base row with the suffix
 * as a variant. An entry that names nothing takes no slot.
 */
function resolveChain(
  chain: string[],
  /** How many entries at the head of the chain the request named (the rest are the account's fallbacks). */
  requested: number,
  catalog: CatalogSnapshot,
  stages: readonly FilterStage[],
): { models: ResolvedModel[]; unresolved: string[]; fromRequest: number } {
  const models: ResolvedModel[] = [];
  const unresolved: string[] = [];
  let fromRequest = 0;
  for (const [i, entry] of chain.entries()) {
    if (i === requested) fromRequest = models.length;
    let model = resolveModel(entry, catalog);
    if (!model) {
      unresolved.push(entry);
      continue;
    }
    const alternate = model.alternate;
    if (alternate && passing(catalog.endpointsOf(model.modelId), model, stages, null).length === 0) model = alternate;
    if (!models.some((m) => m.modelId === model.modelId)) models.push(model);
  }
  if (chain.length <= requested) fromRequest = models.length;
  return { models, unresolved, fromRequest };
}

function candidate(r: RankedEndpoint, modelRank: number, pinned: boolean): routing.Candidate {
  const { endpoint, provider } = r;
  return {
    modelId: endpoint.modelId,
    providerSlug: provider.slug,
    providerName: provider.name,
    endpointId: endpoint.id,
    apiFamily: endpoint.apiFamily ?? provider.apiFamily,
    baseUrl: r.baseUrl,
    upstreamModel: endpoint.upstreamModel,
    price: {
      promptPerMillion: endpoint.price.promptPerMillion,
      completionPerMillion: endpoint.price.completionPerMillion,
      cachedPromptPerMillion: endpoint.price.cachedPromptPerMillion ?? 0n,
      cacheWrite5mPerMillion: endpoint.price.cacheWrite5mPerMillion ?? 0n,
      cacheWrite1hPerMillion: endpoint.price.cacheWrite1hPerMillion ?? 0n,
      priceVersionId: endpoint.price.priceVersionId,
    },
    maxOutputTokens: endpoint.maxOutputTokens ?? 0,
    contextLength: endpoint.contextLength,
    quantization: endpoint.quantization ?? "",
    modelRank,
    // The snapshot's own array, not a copy: read-only by contract and shared per catalog revision.
    supportedParameters: endpoint.supportedParameters,
    pinned,
    deploymentRegion: endpoint.deploymentRegion ?? "",
  };
}

/** A requested model that answers the other way: text for an embeddings request, or embeddings for a chat one. */
function wrongKindRefusal(modelId: string, embeddings: boolean): routing.Refusal {
  const message = embeddings
    ? `model: ${modelId} is not an embedding model; name one whose output is embeddings (e.g. openai/text-embedding-3-small)`
    : `model: ${modelId} is an embedding model; send it to POST /v1/embeddings`;
  return { httpStatus: 400, code: "invalid_request", message, unsatisfiedFilters: [] };
}

/** Why nothing is left: the constraints that removed the endpoints of the models within the depth. */
function noRouteRefusal(models: ResolvedModel[], refused: routing.RefusedEndpoint[], catalog: CatalogSnapshot): routing.Refusal {
  const ids = models.map((m) => m.modelId);
  const subject = ids.length === 1 ? ids[0] : ids.join(", ");
  const constraints = [...new Set(refused.map((r) => r.constraint))];
  if (constraints.length === 0) {
    return { httpStatus: 404, code: "no_route", message: `no provider currently serves ${subject}`, unsatisfiedFilters: [BYOK_CREDENTIAL] };
  }
  if (constraints.length > 1 || constraints[0] !== BYOK_CREDENTIAL) {
    return {
      httpStatus: 404,
      code: "no_route",
      message: `no endpoint serving ${subject} passes: ${constraints.join(", ")}`,
      unsatisfiedFilters: constraints,
    };
  }
  const providers: string[] = [];
  for (const id of ids) {
    for (const { provider } of catalog.endpointsOf(id)) {
      const label = `${provider.name} (${provider.slug})`;
      if (!providers.includes(label)) providers.push(label);
    }
  }
  const message =
    `no enabled provider credential can serve ${subject}: add a provider key for one of the providers ` +
    `serving ${ids.length === 1 ? "it" : "them"}: ${providers.join(", ")}`;
  return { httpStatus: 404, code: "no_route", message, unsatisfiedFilters: [BYOK_CREDENTIAL] };
}

/** A refusal keeps what routing learnt (strategy, unresolved and refused endpoints), with no cascade. */
function refuse(answer: routing.PlanResponse, refusal: routing.Refusal): routing.PlanResponse {
  return { ...answer, cascade: [], refusal };
}
