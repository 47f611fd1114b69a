import type { CatalogSnapshot } from "../catalog/catalog-snapshot";

export const VARIANTS = ["free", "nitro", "floor", "exacto"] as const;
export type Variant = (typeof VARIANTS)[number];

export interface ResolvedModel {
  /** The catalog row the entry names. */
  modelId: string;
  /** The variant suffix the entry carried, whether or not it was part of the row's id. */
  variant: Variant | null;
  /** True for a `~author/family` alias. */
  alias: boolean;
}

const SUFFIX = new RegExp(`^(.+):(${VARIANTS.join("|")})$`);

/**
 * Resolves one chain entry against the catalog, or null when it names nothing:
 * - an exact catalog id always means that row (some free tiers are rows named `author/slug:free`);
 * - otherwise a variant suffix is split off and the rest looked up;
 * - `~author/family` means the row `author/family-latest` when the catalog has it, never a guess.
 * Presets (`@preset/...`) are not resolved here yet.
 */
export function resolveModel(entry: string, catalog: CatalogSnapshot): ResolvedModel | null {
  if (entry.startsWith("~")) {
    const id = `${entry.slice(1)}-latest`;
    return catalog.model(id) ? { modelId: id, variant: null, alias: true } : null;
  }
  const suffix = SUFFIX.exec(entry);
  const variant = (suffix?.[2] as Variant | undefined) ?? null;
  if (catalog.model(entry)) return { modelId: entry, variant, alias: false };
  if (suffix?.[1] && catalog.model(suffix[1])) return { modelId: suffix[1], variant, alias: false };
  return null;
}
