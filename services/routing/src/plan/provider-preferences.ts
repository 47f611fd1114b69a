import type { routing } from "@router/proto";
import type { RankedEndpoint } from "../catalog/catalog-snapshot";
import type { FilterStage } from "./filter-stages";

/**
 * The hard constraints of a request's `provider` object, as filter stages named after the field
 * that refused (`provider.only`, `provider.max_price.prompt`, ...). A field that is not set adds no
 * stage, so a request without preferences pays nothing for them.
 *
 * - `only` / `ignore`: provider slugs kept / removed.
 * - `order` with `allow_fallbacks: false`: nothing but the listed providers (the ordering itself is
 *   `orderByPreference`).
 * - `require_parameters`: the endpoint lists every parameter in the request's
 *   `required_parameters` (an endpoint whose list is empty is unknown and passes, as in the
 *   gateway's per-attempt fit).
 * - `data_collection: "deny"`: the endpoint declares it does not train on what it is sent.
 * - `zdr: true`: the endpoint declares zero data retention.
 * - `quantizations`: the endpoint serves one of them (an undeclared quantization matches none).
 * - `max_price`: the endpoint's prompt / completion price per million is at most the bound.
 */
export function preferenceStages(req: routing.PlanRequest): FilterStage[] {
  const p = req.provider;
  if (!p) return [];
  const stages: FilterStage[] = [];
  const bySlug = (constraint: string, admits: (slug: string) => boolean): FilterStage => ({
    refuses: (r) => (admits(r.provider.slug) ? null : constraint),
  });
  if (p.only.length > 0) {
    const only = new Set(p.only);
    stages.push(bySlug("provider.only", (s) => only.has(s)));
  }
  if (p.ignore.length > 0) {
    const ignore = new Set(p.ignore);
    stages.push(bySlug("provider.ignore", (s) => !ignore.has(s)));
  }
  if (p.order.length > 0 && p.allowFallbacks === false) {
    const order = new Set(p.order);
    stages.push(bySlug("provider.order", (s) => order.has(s)));
  }
  if (p.requireParameters === true && req.requiredParameters.length > 0) {
    const needed = req.requiredParameters;
    stages.push({
      refuses: ({ endpoint: { supportedParameters: listed } }) =>
        listed.length === 0 || needed.every((n) => listed.includes(n)) ? null : "provider.require_parameters",
    });
  }
  if (p.dataCollection === "deny") stages.push({ refuses: (r) => (r.endpoint.noTraining ? null : "provider.data_collection") });
  if (p.zdr === true) stages.push({ refuses: (r) => (r.endpoint.zdr ? null : "provider.zdr") });
  if (p.quantizations.length > 0) {
    const allowed = new Set(p.quantizations.map((q) => q.toLowerCase()));
    stages.push({
      refuses: (r) => (allowed.has((r.endpoint.quantization ?? "").toLowerCase()) ? null : "provider.quantizations"),
    });
  }
  const maxPrompt = p.maxPricePromptPerMillion;
  if (maxPrompt !== undefined) {
    stages.push({ refuses: (r) => (r.endpoint.price.promptPerMillion <= maxPrompt ? null : "provider.max_price.prompt") });
  }
  const maxCompletion = p.maxPriceCompletionPerMillion;
  if (maxCompletion !== undefined) {
    stages.push({
      refuses: (r) => (r.endpoint.price.completionPerMillion <= maxCompletion ? null : "provider.max_price.completion"),
    });
  }
  return stages;
}

/**
 * `provider.order`: the listed providers' endpoints first, in the listed order (a provider's own
 * endpoints keep their ranked order), then the rest in their ranked order. Returns `ranked` itself
 * when there is no order.
 */
export function orderByPreference(ranked: RankedEndpoint[], order: readonly string[]): RankedEndpoint[] {
  if (order.length === 0) return ranked;
  const place = new Map<string, number>();
  order.forEach((slug, i) => {
    if (!place.has(slug)) place.set(slug, i);
  });
  const at = (r: RankedEndpoint) => place.get(r.provider.slug) ?? order.length;
  // Array.prototype.sort is stable, so ties keep the ranking.
  return [...ranked].sort((a, b) => at(a) - at(b));
}
