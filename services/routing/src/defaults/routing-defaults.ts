import { invalid } from "@router/errors";
import { parseInput } from "@router/http-kit";
import { routing } from "@router/management-api";
import type { CatalogSnapshot } from "../catalog/catalog-snapshot";

export const DEFAULT_SORTS = routing.DEFAULT_SORTS;
export type DefaultSort = (typeof DEFAULT_SORTS)[number];

/** An account's routing defaults ("Routing defaults", in the service README). */
export interface RoutingDefaults {
  /** Used when a request names no model; null: such a request is refused. */
  defaultModel: string | null;
  /** Tried in order after the request's own models, within the fallback depth. */
  fallbackModels: readonly string[];
  defaultSort: DefaultSort | null;
  /** Ignore a request's own `provider.sort`; only ever true with a `defaultSort`. */
  lockSort: boolean;
  /** Null when the account never set them. */
  updatedAt: Date | null;
}

export const NEVER_SET: RoutingDefaults = Object.freeze({
  defaultModel: null,
  fallbackModels: Object.freeze([]),
  defaultSort: null,
  lockSort: false,
  updatedAt: null,
});

/** At most this many account fallback models; only the first few can ever fit the depth of three. */
export const MAX_FALLBACK_MODELS = routing.MAX_FALLBACK_MODELS;

const DefaultsBody = routing.routingDefaultsBody;

const KNOWN_FIELDS = new Set(Object.keys(DefaultsBody.shape));

/** The defaults as every response carries them: all keys present. */
export function defaultsJson(d: RoutingDefaults) {
  return {
    default_model: d.defaultModel,
    fallback_models: [...d.fallbackModels],
    default_sort: d.defaultSort,
    lock_sort: d.lockSort,
    updated_at: d.updatedAt?.toISOString() ?? null,
  };
}

/**
 * Reads a PUT body into the whole new set (an omitted field is cleared) and checks it against the
 * catalog: the default model and every fallback must be a listed, active model id as written (no
 * variant suffix or alias, so what is stored is what the models list shows). Throws a 400 naming
 * the field.
 */
export function parseDefaults(body: unknown, catalog: CatalogSnapshot, now: Date): RoutingDefaults {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalid("body", "expected a JSON object");
  for (const key of Object.keys(body)) {
    if (!KNOWN_FIELDS.has(key)) throw invalid(key, "unknown field");
  }
  const input = parseInput(DefaultsBody, body);
  const defaultModel = input.default_model ?? null;
  const fallbackModels = input.fallback_models ?? [];
  const defaultSort = input.default_sort ?? null;
  const lockSort = input.lock_sort ?? false;

  if (defaultModel !== null && !catalog.model(defaultModel)) {
    throw invalid("default_model", `${defaultModel} is not a listed model id`);
  }
  fallbackModels.forEach((id, i) => {
    if (!catalog.model(id)) throw invalid(`fallback_models.${i}`, `${id} is not a listed model id`);
    if (fallbackModels.indexOf(id) !== i) throw invalid(`fallback_models.${i}`, `${id} is listed twice`);
  });
  if (lockSort && defaultSort === null) throw invalid("lock_sort", "needs default_sort: there is no sort to lock");

  return { defaultModel, fallbackModels, defaultSort, lockSort, updatedAt: now };
}
