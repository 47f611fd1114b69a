import type { routing } from "@router/proto";
import type { RankedEndpoint } from "../catalog/catalog-snapshot";
import type { ResolvedModel } from "./model-resolution";
import { guardrailStages, type RoutingGuardrail } from "../guardrails/guardrail-stages";
import { NO_POLICY, privacyStages, type PrivacyPolicy } from "../privacy/privacy-policy";
import { preferenceStages } from "./provider-preferences";
import { VARIANT_RULES } from "./variants";

/**
 * One hard constraint on the endpoints of a model. `refuses` names the constraint the endpoint
 * fails (recorded in `refused`, and in `unsatisfied_filters` when nothing is left), or null.
 * Stages run in order and the first refusal is the one recorded, so the order is the order in
 * which the pipeline explains itself: credentials, then the guardrails, the privacy policy,
 * then the request's provider preferences, then the model's variant.
 */
export interface FilterStage {
  refuses(r: RankedEndpoint, model: ResolvedModel): string | null;
}

export const BYOK_CREDENTIAL = "byok_credential";

/**
 * Nothing routes until the organisation holds an enabled credential for the endpoint's provider,
 * and, for a cloud whose credentials name their regions, one for the endpoint's region (an endpoint
 * that declares no region passes on any of them).
 */
export function credentialStage(byokProviders: readonly string[], credentialRegions: readonly routing.CredentialRegions[] = []): FilterStage {
  const held = new Set(byokProviders);
  const regions = new Map(credentialRegions.map((c) => [c.providerSlug, new Set(c.regions)]));
  return {
    refuses: (r) => {
      if (!held.has(r.provider.slug)) return BYOK_CREDENTIAL;
      const served = regions.get(r.provider.slug);
      const region = r.endpoint.deploymentRegion;
      return !served || region === null || served.has(region) ? null : BYOK_CREDENTIAL;
    },
  };
}

/** The filter part of a model's variant (`:free`, `:exacto`); `:floor` and `:nitro` only sort. */
export const variantStage: FilterStage = {
  refuses(r, model) {
    const rule = model.variant ? VARIANT_RULES[model.variant] : undefined;
    return rule?.admits && !rule.admits(r) ? (rule.constraint ?? `variant:${model.variant}`) : null;
  },
};

/** The stages one request's endpoints pass, in order. */
export function filterStages(
  req: routing.PlanRequest,
  guardrails: readonly RoutingGuardrail[] = [],
  privacy: PrivacyPolicy = NO_POLICY,
): FilterStage[] {
  return [credentialStage(req.byokProviders, req.credentialRegions), ...guardrailStages(guardrails), ...privacyStages(privacy), ...preferenceStages(req), variantStage];
}

/**
 * The model's endpoints that pass every stage, in their given order; each one removed is added to
 * `refused` (when given) with the first constraint that removed it.
 */
export function passing(
  endpoints: readonly RankedEndpoint[],
  model: ResolvedModel,
  stages: readonly FilterStage[],
  refused: routing.RefusedEndpoint[] | null,
): RankedEndpoint[] {
  const kept: RankedEndpoint[] = [];
  for (const r of endpoints) {
    let constraint: string | null = null;
    for (const stage of stages) {
      constraint = stage.refuses(r, model);
      if (constraint !== null) break;
    }
    if (constraint === null) kept.push(r);
    else refused?.push({ modelId: r.endpoint.modelId, providerSlug: r.provider.slug, endpointId: r.endpoint.id, constraint });
  }
  return kept;
}
