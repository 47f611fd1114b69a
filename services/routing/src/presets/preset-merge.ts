import { fromUsd } from "@router/money";
import type { routing } from "@router/proto";
import { GATEWAY_PARAMS, type PresetProvider, type PresetSettings } from "./preset-body";

/** One version of a preset, as a request uses it. */
export interface PresetVersion {
  slug: string;
  version: number;
  settings: PresetSettings;
}

/**
 * The request with the preset's settings filled in under it: whatever the request sets wins.
 * The request's `model` was the reference itself, so the preset's `model` takes its place; the
 * preset's `models` apply when the request has none; `provider` is merged key by key (a request
 * that sets only `sort` keeps the preset's other preferences); `routing_stability` when the request
 * sets none. The gateway fills in the other settings (`params_json` of `presetApplied`).
 */
export function applyPreset(req: routing.PlanRequest, preset: PresetVersion): routing.PlanRequest {
  const s = preset.settings;
  return {
    ...req,
    model: s.model ?? "",
    models: req.models.length > 0 ? req.models : (s.models ?? []),
    provider: s.provider ? mergeProvider(req.provider, s.provider) : req.provider,
    routingStability: req.routingStability || (s.routing_stability ?? ""),
  };
}

export function presetApplied(preset: PresetVersion): routing.PresetApplied {
  const params: Record<string, unknown> = {};
  for (const key of GATEWAY_PARAMS) if (preset.settings[key] !== undefined) params[key] = preset.settings[key];
  return { slug: preset.slug, version: preset.version, paramsJson: JSON.stringify(params) };
}

function mergeProvider(own: routing.ProviderPreferences | undefined, preset: PresetProvider): routing.ProviderPreferences {
  const list = (mine: string[] | undefined, theirs: string[] | undefined) => (mine && mine.length > 0 ? mine : (theirs ?? []));
  return {
    order: list(own?.order, preset.order),
    only: list(own?.only, preset.only),
    ignore: list(own?.ignore, preset.ignore),
    allowFallbacks: own?.allowFallbacks ?? preset.allow_fallbacks,
    requireParameters: own?.requireParameters ?? preset.require_parameters,
    dataCollection: own?.dataCollection || (preset.data_collection ?? ""),
    zdr: own?.zdr ?? preset.zdr,
    sort: own?.sort || (preset.sort ?? ""),
    quantizations: list(own?.quantizations, preset.quantizations),
    maxPricePromptPerMillion: own?.maxPricePromptPerMillion ?? usd(preset.max_price?.prompt),
    maxPriceCompletionPerMillion: own?.maxPriceCompletionPerMillion ?? usd(preset.max_price?.completion),
  };
}

const usd = (n: number | undefined): bigint | undefined => (n === undefined ? undefined : fromUsd(n));
