import type { CatalogSnapshot } from "../catalog/catalog-snapshot";
import type { Variant } from "./variants";
import { VARIANTS } from "./variants";

export interface ResolvedModel {
  /** The catalog row the entry names. */
  modelId: string;
  /** The variant suffix the entry carried, whether or not it was part of the row's id. */
  variant: Variant | null;
  /** True for a `~author/family` alias. */
  alias: boolean;
  /**
   * For a listed row whose id ends in a variant suffix (`author/slug:free`): the base row with the
   * suffix split off as a variant, used when the listed row cannot serve the request.
   */
  alternate?: ResolvedModel;
}

const SUFFIX = new RegExp(`^(.+):(${VARIANTS.join("|")})$`);

/**
 * Resolves one chain entry against the catalog, or null when it names nothing:
 * - an id the catalog lists always means that row first (some free tiers are rows named
 *   `author/slug:free`); its suffix still applies as a variant, and when the row cannot serve the
 *   request, Plan tries the base row with the suffix split off (`alternate`);
 * - otherwise a variant suffix is split off and the rest looked up;
 * - `~author/family` means the row `author/family-latest` when the catalog has it, never a guess;
 * - a name the catalog lists as an alias (a provider's own id, `claude-sonnet-4-5-20250929`) means
 *   the model it belongs to, with or without a variant suffix; a catalog id always wins over one.
 * Presets (`@preset/...`) are resolved before the chain is built (see presets/preset-merge.ts);
 * an entry that still names one here names no model.
 */
export function resolveModel(entry: string, catalog: CatalogSnapshot): ResolvedModel | null {
  if (entry.startsWith("~")) {
    const id = `${entry.slice(1)}-latest`;
    return catalog.model(id) ? { modelId: id, variant: null, alias: true } : null;
  }
  const suffix = SUFFIX.exec(entry);
  const variant = (suffix?.[2] as Variant | undefined) ?? null;
  const base = suffix?.[1] && catalog.model(suffix[1]) ? { modelId: suffix[1], variant, alias: false } : undefined;
  if (catalog.model(entry)) return base ? { modelId: entry, variant, alias: false, alternate: base } : { modelId: entry, variant, alias: false };
  if (base) return base;
  return aliased(entry, null, catalog) ?? (suffix?.[1] ? aliased(suffix[1], variant, catalog) : null);
}

function aliased(name: string, variant: Variant | null, catalog: CatalogSnapshot): ResolvedModel | null {
  const model = catalog.modelAliased(name);
  return model ? { modelId: model.id, variant, alias: false } : null;
}
