import { regionNames } from "../catalog/region-areas";
import type { routing } from "@router/proto";
import type { RankedEndpoint } from "../catalog/catalog-snapshot";
import type { FilterStage } from "../plan/filter-stages";
import type { GuardrailSettings } from "./guardrail-body";

/** The routing part of one guardrail, as Plan checks it: empty allowlists are null (unrestricted). */
export interface RoutingGuardrail {
  id: string;
  models: ReadonlySet<string> | null;
  providers: ReadonlySet<string> | null;
  regions: ReadonlySet<string> | null;
  /** Model authors whose models must be served by endpoints declaring ZDR. */
  zdrAuthors: ReadonlySet<string>;
  /** Its content filters, for the gateway to run over the messages; null when it sets none. */
  contentFilter: routing.ContentFilterSet | null;
  /** Its spend budget, which the gateway has the ledger apply per key; null when it sets none. */
  budget: routing.GuardrailBudget | null;
}

export function routingGuardrail(id: string, g: GuardrailSettings): RoutingGuardrail {
  const setOf = (list: string[]) => (list.length > 0 ? new Set(list) : null);
  return {
    id,
    models: setOf(g.allowedModels),
    providers: setOf(g.allowedProviders),
    regions: setOf(g.allowedDataRegions),
    zdrAuthors: new Set(Object.entries(g.enforceZdr).flatMap(([author, on]) => (on ? [author] : []))),
    contentFilter:
      g.contentFilterBuiltins.length === 0 && g.contentFilters.length === 0
        ? null
        : {
            guardrailId: id,
            builtins: g.contentFilterBuiltins,
            rules: g.contentFilters.map((f) => ({ name: f.name ?? "", pattern: f.pattern, action: f.action })),
            allowlist: g.filterAllowlist,
          },
    budget:
      g.budgetNanodollars === null
        ? null
        : { guardrailId: id, limitNanodollars: g.budgetNanodollars, window: g.budgetReset ?? "lifetime", includeByok: g.includeByokInBudgets },
  };
}

/** What a plan reports of the guardrails that applied: their ids, content filters and budgets. */
export function appliedGuardrails(
  guardrails: readonly RoutingGuardrail[] | null | undefined,
): Pick<routing.PlanResponse, "guardrailsApplied" | "contentFilters" | "guardrailBudgets"> {
  return {
    guardrailsApplied: guardrails?.map((g) => g.id) ?? [],
    contentFilters: guardrails?.flatMap((g) => (g.contentFilter ? [g.contentFilter] : [])) ?? [],
    guardrailBudgets: guardrails?.flatMap((g) => (g.budget ? [g.budget] : [])) ?? [],
  };
}

const authorOf = (modelId: string) => modelId.slice(0, modelId.indexOf("/"));

/**
 * The stages of the guardrails that apply to a request (the key's and its member's), each level
 * only narrowing: an endpoint passes a kind only when it passes every guardrail of that kind, so
 * allowlists intersect. `allowed_data_regions` matches the endpoint's `deployment_region`, or the
 * area of a known cloud region (`eu` holds `eu-central-1`: catalog/region-areas.ts), and fails closed (an endpoint declaring none is refused); `enforce_zdr` needs an endpoint that
 * declares ZDR for the models of the listed authors. A kind no guardrail sets adds no stage.
 */
export function guardrailStages(guardrails: readonly RoutingGuardrail[]): FilterStage[] {
  if (guardrails.length === 0) return [];
  const stages: FilterStage[] = [];
  const kind = (constraint: string, sets: ReadonlySet<string>[], valueOf: (r: RankedEndpoint) => string | null) => {
    if (sets.length === 0) return;
    stages.push({
      refuses: (r) => {
        const value = valueOf(r);
        return value !== null && sets.every((s) => s.has(value)) ? null : constraint;
      },
    });
  };
  const present = <T>(v: T | null): v is T => v !== null;
  kind("guardrail.allowed_models", guardrails.map((g) => g.models).filter(present), (r) => r.endpoint.modelId);
  kind("guardrail.allowed_providers", guardrails.map((g) => g.providers).filter(present), (r) => r.provider.slug);
  const regionSets = guardrails.map((g) => g.regions).filter(present);
  if (regionSets.length > 0) {
    stages.push({
      refuses: (r) => {
        const names = regionNames(r.endpoint.deploymentRegion);
        return regionSets.every((s) => names.some((n) => s.has(n))) ? null : "guardrail.allowed_data_regions";
      },
    });
  }
  const zdrAuthors = new Set(guardrails.flatMap((g) => [...g.zdrAuthors]));
  if (zdrAuthors.size > 0) {
    stages.push({ refuses: (r) => (r.endpoint.zdr || !zdrAuthors.has(authorOf(r.endpoint.modelId)) ? null : "guardrail.enforce_zdr") });
  }
  return stages;
}
