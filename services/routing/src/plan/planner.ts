import type { Logger } from "@router/logging";
import type { routing } from "@router/proto";
import type { CatalogCache } from "../catalog/catalog-cache";
import type { DefaultsCache } from "../defaults/defaults-cache";
import { NEVER_SET } from "../defaults/routing-defaults";
import type { GuardrailCache } from "../guardrails/guardrail-cache";
import { appliedGuardrails, type RoutingGuardrail } from "../guardrails/guardrail-stages";
import type { HealthCache } from "../health/health-cache";
import type { PrivacyPolicies } from "../privacy/privacy-policies";
import type { PresetCache } from "../presets/preset-cache";
import { applyPreset, presetApplied } from "../presets/preset-merge";
import { parsePresetReference } from "../presets/preset-reference";
import type { PinStore } from "../sticky/pin-store";
import { stickyKeyOf, type StickyKey } from "../sticky/sticky-key";
import { plan } from "./plan";
import { freshSeed } from "./seeded-draw";

/** Where Plan's inputs come from: all in memory, except a key's sticky pins (Redis when shared). */
export interface PlanSources {
  catalog: CatalogCache;
  health: HealthCache;
  defaults: DefaultsCache;
  presets: PresetCache;
  guardrails: GuardrailCache;
  privacy: PrivacyPolicies;
  pins: PinStore;
  log: Logger;
}

const NO_PINS: ReadonlyMap<string, string> = new Map();

/**
 * One Plan call: the named preset merged under the request (or the 404 of one that names nothing),
 * the account's defaults, the sticky key's pins, a seed, then the pure `plan`.
 */
export async function planRequest(req: routing.PlanRequest, sources: PlanSources): Promise<routing.PlanResponse> {
  const ref = parsePresetReference(req.model);
  let effective = req;
  let preset: routing.PresetApplied | undefined;
  if (ref) {
    const version = req.orgId ? await sources.presets.find(req.orgId, ref) : null;
    // A content filter binds before routing, so even this refusal carries the guardrails' filters.
    if (!version) return presetNotFound(ref.text, req.routingSeed, await readGuardrails(req, sources));
    effective = applyPreset(req, version);
    preset = presetApplied(version);
  }
  const sticky = stickyKeyOf(effective);
  const [account, pins, guardrails] = await Promise.all([
    req.orgId ? sources.defaults.get(req.orgId) : NEVER_SET,
    readPins(req.orgId, sticky, sources),
    readGuardrails(req, sources),
  ]);
  return plan(effective, {
    catalog: sources.catalog.snapshot(),
    health: sources.health.snapshot(),
    account,
    seed: effective.routingSeed || freshSeed(),
    sticky,
    pins,
    preset,
    guardrails,
    privacy: req.orgId ? sources.privacy.get(req.orgId) : undefined,
  });
}

// Nobody named, nothing assigned: no read (and no refusal when the guardrails cannot be read).
function readGuardrails(req: routing.PlanRequest, sources: PlanSources): Promise<readonly RoutingGuardrail[] | null> | readonly RoutingGuardrail[] {
  if (!req.orgId || !(req.keyHash || req.memberUserId)) return [];
  return sources.guardrails.forSubject(req.orgId, { keyHash: req.keyHash, memberUserId: req.memberUserId });
}

// Pins are a preference: when they cannot be read the request routes without them.
async function readPins(orgId: string, key: StickyKey | null, sources: PlanSources): Promise<ReadonlyMap<string, string>> {
  if (!key || key.mode === "adaptive" || !orgId) return NO_PINS;
  try {
    return await sources.pins.read(orgId, key.hash);
  } catch (err) {
    sources.log.warn({ err }, "routing.sticky.read_failed");
    return NO_PINS;
  }
}

function presetNotFound(reference: string, seed: string, guardrails: readonly RoutingGuardrail[] | null): routing.PlanResponse {
  return {
    cascade: [],
    refusal: { httpStatus: 404, code: "model_not_found", message: `preset not found: ${reference}`, unsatisfiedFilters: [] },
    strategy: "direct",
    beyondFallbackDepth: 0,
    unresolvedModels: [reference],
    ordering: "deterministic",
    routingSeed: seed,
    sticky: undefined,
    preset: undefined,
    refused: [],
    sort: "",
    ...appliedGuardrails(guardrails),
  };
}
