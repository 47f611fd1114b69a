import { invalid } from "@router/errors";
import { fromZod } from "@router/http-kit";
import { routing } from "@router/management-api";
import type { providerPreferencesSchema } from "@router/request-settings";
import type { z } from "zod";
import type { CatalogSnapshot } from "../catalog/catalog-snapshot";
import { resolveModel } from "../plan/model-resolution";
import { PRESET_PREFIX } from "./preset-reference";

/*
 * A preset's settings ("Preset", in the service README): the request fields a preset may fill in, with the
 * bounds the chat route puts on them (@router/request-settings). Anything else a whole request
 * body carries (messages, tools, stream, ...) is dropped and named in `dropped`.
 */

export const PresetSettings = routing.presetSettings;
export type PresetSettings = z.infer<typeof PresetSettings>;
export type PresetProvider = z.infer<typeof providerPreferencesSchema>;

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
