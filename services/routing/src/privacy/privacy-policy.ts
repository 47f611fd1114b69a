import { regionNames } from "../catalog/region-areas";
import type { routing } from "@router/proto";
import { routing as routingApi } from "@router/management-api";
import { invalid } from "@router/errors";
import { parseInput } from "@router/http-kit";
import type { CatalogSnapshot, RankedEndpoint } from "../catalog/catalog-snapshot";
import { passing, type FilterStage } from "../plan/filter-stages";

/** An organisation's privacy policy; every field off means no restriction. */
export interface PrivacyPolicy {
  zdr: boolean;
  /** Model authors whose models must be served by endpoints declaring ZDR. */
  zdrGroups: string[];
  denyTraining: boolean;
  /** Deployment regions allowed (lower case); empty: unrestricted. */
  regions: string[];
}

export const NO_POLICY: PrivacyPolicy = { zdr: false, zdrGroups: [], denyTraining: false, regions: [] };

// Strict: an unknown field is a 400, and an omitted one is off (@router/management-api).
const PolicyBody = routingApi.privacyPolicyBody;

/**
 * Validates a whole policy. Groups must be model authors of the catalog and regions must be
 * declared by some endpoint: either would otherwise silently refuse everything or nothing.
 */
export function readPolicyBody(body: unknown, catalog: CatalogSnapshot): PrivacyPolicy {
  const input = parseInput(PolicyBody, body ?? {});
  const groups = modelGroups(catalog);
  input.zdr_groups.forEach((g, i) => {
    if (!groups.has(g)) throw invalid(`zdr_groups.${i}`, `no model of the catalog is by ${g}`);
  });
  const declared = catalog.declaredRegions();
  input.regions.forEach((r, i) => {
    if (!declared.has(r)) throw invalid(`regions.${i}`, `no endpoint declares the region ${r}`);
  });
  return { zdr: input.zdr, zdrGroups: [...new Set(input.zdr_groups)], denyTraining: input.deny_training, regions: [...new Set(input.regions)] };
}

export function policyJson(p: PrivacyPolicy) {
  return { zdr: p.zdr, zdr_groups: p.zdrGroups, deny_training: p.denyTraining, regions: p.regions };
}

/** Model authors by how many models of the catalog each has, most first. */
export function modelGroups(catalog: CatalogSnapshot): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of catalog.models) {
    const author = m.id.slice(0, m.id.indexOf("/"));
    counts.set(author, (counts.get(author) ?? 0) + 1);
  }
  return new Map([...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)));
}

const authorOf = (r: RankedEndpoint) => r.endpoint.modelId.slice(0, r.endpoint.modelId.indexOf("/"));

/**
 * The policy as Plan stages, after the guardrails and before the request's preferences; with those
 * they only tighten: ZDR and no-training are required when any of them asks (separate stages of
 * the same test), ZDR groups add to guardrails' `enforce_zdr`, regions intersect with guardrails'
 * `allowed_data_regions`. An endpoint that does not declare ZDR, no-training or a region fails.
 */
export function privacyStages(p: PrivacyPolicy): FilterStage[] {
  const stages: FilterStage[] = [];
  if (p.zdr) stages.push({ refuses: (r) => (r.endpoint.zdr ? null : "privacy.zdr") });
  if (p.zdrGroups.length > 0) {
    const groups = new Set(p.zdrGroups);
    stages.push({ refuses: (r) => (r.endpoint.zdr || !groups.has(authorOf(r)) ? null : "privacy.zdr_groups") });
  }
  if (p.denyTraining) stages.push({ refuses: (r) => (r.endpoint.noTraining ? null : "privacy.deny_training") });
  if (p.regions.length > 0) {
    const regions = new Set(p.regions);
    stages.push({ refuses: (r) => (regionNames(r.endpoint.deploymentRegion).some((n) => regions.has(n)) ? null : "privacy.regions") });
  }
  return stages;
}

export interface Eligibility {
  /** Models with at least one endpoint the policy allows. */
  available: number;
  /** Models with none. */
  unavailable: number;
  /** Each unavailable model with the constraints that removed its endpoints. */
  excluded: { model_id: string; constraints: string[] }[];
}

/** What the policy leaves of the catalog, model by model (credentials aside). */
export function eligibilityOf(p: PrivacyPolicy, catalog: CatalogSnapshot): Eligibility {
  const stages = privacyStages(p);
  const out: Eligibility = { available: 0, unavailable: 0, excluded: [] };
  for (const model of catalog.models) {
    const refused: routing.RefusedEndpoint[] = [];
    const kept = passing(catalog.endpointsOf(model.id), { modelId: model.id, variant: null, alias: false }, stages, refused);
    if (kept.length > 0) out.available += 1;
    else {
      out.unavailable += 1;
      out.excluded.push({ model_id: model.id, constraints: [...new Set(refused.map((r) => r.constraint))] });
    }
  }
  return out;
}
