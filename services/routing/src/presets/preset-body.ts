import { invalid } from "@router/errors";
import { fromZod } from "@router/http-kit";
import { z } from "zod";
import type { CatalogSnapshot } from "../catalog/catalog-snapshot";
import { resolveModel } from "../plan/model-resolution";
import { SORTS } from "../plan/ranking";
import { PRESET_PREFIX } from "./preset-reference";

/*
 * A preset's settings (spec doc 1, "Preset"): the request fields a preset may fill in, with the
 * bounds the chat route puts on them. Anything else a whole request body carries (messages, tools,
 * stream, ...) is dropped and named in `dropped`.
 */

const slugList = z.array(z.string().min(1).max(128)).max(64);
const usdPerMillion = z.number().min(0).max(1_000_000);

const ProviderPreferences = z.object({
  order: slugList.optional(),
  only: slugList.optional(),
  ignore: slugList.optional(),
  allow_fallbacks: z.boolean().optional(),
  require_parameters: z.boolean().optional(),
  data_collection: z.enum(["allow", "deny"]).optional(),
  zdr: z.boolean().optional(),
  sort: z.enum(SORTS).optional(),
  quantizations: slugList.optional(),
  max_price: z.object({ prompt: usdPerMillion.optional(), completion: usdPerMillion.optional() }).optional(),
});

const Reasoning = z
  .object({
    effort: z.enum(["low", "medium", "high"]).optional(),
    max_tokens: z.number().int().min(1).max(10_000_000).optional(),
    exclude: z.boolean().optional(),
    enabled: z.boolean().optional(),
  })
  .refine((r) => r.effort === undefined || r.max_tokens === undefined, { message: "give either effort or max_tokens, not both" });

const modelId = z.string().trim().min(1).max(256);

export const PresetSettings = z.object({
  model: modelId.optional(),
  models: z.array(modelId).max(16).optional(),
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  max_tokens: z.number().int().min(1).max(10_000_000).optional(),
  seed: z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).optional(),
  provider: ProviderPreferences.optional(),
  reasoning: Reasoning.optional(),
  routing_stability: z.enum(["adaptive", "sticky", "pinned"]).optional(),
});
export type PresetSettings = z.infer<typeof PresetSettings>;
export type PresetProvider = z.infer<typeof ProviderPreferences>;

export const SETTING_FIELDS: readonly string[] = Object.keys(PresetSettings.shape);

/** The settings that apply outside routing: the gateway fills them into the request. */
export const GATEWAY_PARAMS = ["temperature", "top_p", "top_k", "max_tokens", "seed", "reasoning"] as const;

/** A stored body is at most this large as JSON, so a preset stays a handful of settings. */
const MAX_BODY_BYTES = 16_384;

/**
 * Reads a preset `body` (a whole request body is accepted): keeps the settings, names every other
 * field in `dropped`, and validates what is kept, including that each model it names resolves in
 * the catalog today. Throws a 400 naming the field (`body.temperature`, `body.models.1`).
 */
export function readPresetBody(body: unknown, catalog: CatalogSnapshot): { settings: PresetSettings; dropped: string[] } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalid("body", "expected a JSON object");
  const kept: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const [key, value] of Object.entries(body)) {
    if (SETTING_FIELDS.includes(key)) kept[key] = value;
    else dropped.push(key);
  }
  const parsed = PresetSettings.safeParse(kept);
  if (!parsed.success) throw fromZod(parsed.error, "body");
  const settings = parsed.data;
  if (settings.model !== undefined) checkModel(settings.model, "body.model", catalog);
  settings.models?.forEach((m, i) => checkModel(m, `body.models.${i}`, catalog));
  if (Buffer.byteLength(JSON.stringify(settings)) > MAX_BODY_BYTES) throw invalid("body", `at most ${MAX_BODY_BYTES} bytes of settings`);
  return { settings, dropped };
}

function checkModel(entry: string, field: string, catalog: CatalogSnapshot): void {
  // A preset naming a preset would make resolution recursive.
  if (entry.startsWith(PRESET_PREFIX)) throw invalid(field, "a preset cannot name another preset");
  if (!resolveModel(entry, catalog)) throw invalid(field, `${entry} names no listed model`);
}
