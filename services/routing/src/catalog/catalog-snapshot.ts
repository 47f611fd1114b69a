import { regionNames } from "./region-areas";
import type { CatalogRows, Endpoint, EndpointPrice, Model, Provider } from "./catalog-store";

/** An endpoint with its provider, in the order Plan offers them for its model. */
export interface RankedEndpoint {
  endpoint: Endpoint;
  provider: Provider;
  /** The provider's base URL after any operator override. */
  baseUrl: string;
}

export interface SnapshotOptions {
  /**
   * Base URL overrides by provider slug (`-` may be written `_`), from
   * `ROUTER_PROVIDER_<SLUG>_BASE_URL`: self-hosted servers, tests and benchmarks.
   */
  providerBaseUrls?: Record<string, string>;
}

/**
 * The catalog indexed for the hot path: every lookup Plan and the catalog routes make is a map
 * read, and each model's endpoints are ranked once per catalog revision rather than per request.
 */
export class CatalogSnapshot {
  readonly revision: bigint;
  /** Active providers by slug. */
  readonly providers: readonly Provider[];
  /** Active models by id. */
  readonly models: readonly Model[];
  private readonly modelById = new Map<string, Model>();
  /** Models by the ids their authors serve them by (the import keeps each alias to one model). */
  private readonly modelByAlias = new Map<string, Model>();
  /** Models whose output is embeddings (`architecture.output_modalities`): served by `POST /v1/embeddings` only. */
  private readonly embeddingModels = new Set<string>();
  private readonly ranked = new Map<string, RankedEndpoint[]>();
  private regions: ReadonlySet<string> | undefined;

  constructor(rows: CatalogRows, opts: SnapshotOptions = {}) {
    this.revision = rows.revision;
    this.providers = rows.providers;
    this.models = rows.models;
    for (const m of rows.models) {
      this.modelById.set(m.id, m);
      for (const alias of m.aliases) this.modelByAlias.set(alias, m);
      if (m.architecture?.output_modalities.includes("embeddings")) this.embeddingModels.add(m.id);
    }
    const providerBySlug = new Map(rows.providers.map((p) => [p.slug, p]));
    for (const endpoint of rows.endpoints) {
      const provider = providerBySlug.get(endpoint.providerSlug);
      if (!provider || !this.modelById.has(endpoint.modelId)) continue;
      const list = this.ranked.get(endpoint.modelId) ?? [];
      list.push({ endpoint, provider, baseUrl: overriddenBaseUrl(provider, opts.providerBaseUrls) });
      this.ranked.set(endpoint.modelId, list);
    }
    for (const list of this.ranked.values()) list.sort(byPriceThenProvider);
  }

  static empty(): CatalogSnapshot {
    return new CatalogSnapshot({ revision: 0n, providers: [], models: [], endpoints: [] });
  }

  /** Every `deployment_region` an endpoint of the catalog declares, and the area of each known cloud region. */
  declaredRegions(): ReadonlySet<string> {
    if (!this.regions) {
      const regions = new Set<string>();
      for (const list of this.ranked.values()) for (const r of list) for (const name of regionNames(r.endpoint.deploymentRegion)) regions.add(name);
      this.regions = regions;
    }
    return this.regions;
  }

  model(id: string): Model | undefined {
    return this.modelById.get(id);
  }

  /** The model an author's own id names (`claude-sonnet-4-5`), if any. */
  modelAliased(alias: string): Model | undefined {
    return this.modelByAlias.get(alias);
  }

  /** The model a name means: its catalog id, else one of its aliases (an id always wins). */
  modelNamed(name: string): Model | undefined {
    return this.modelById.get(name) ?? this.modelByAlias.get(name);
  }

  /** Whether the model answers with embeddings rather than text. */
  isEmbeddingModel(id: string): boolean {
    return this.embeddingModels.has(id);
  }

  /** The model's endpoints, cheapest first, then by provider slug. */
  endpointsOf(modelId: string): readonly RankedEndpoint[] {
    return this.ranked.get(modelId) ?? [];
  }

  /**
   * The price the catalog lists for a model: its cheapest endpoint on hosted capacity. Self-hosted
   * endpoints cost 0 and would make every open model look free, so they count only when nothing
   * else serves the model.
   */
  listPrice(modelId: string): EndpointPrice | null {
    const list = this.endpointsOf(modelId);
    const hosted = list.find((r) => !r.provider.selfHosted);
    return (hosted ?? list[0])?.endpoint.price ?? null;
  }
}

/**
 * The ordering key for "cheapest": prompt plus completion price per million tokens. Plan then moves
 * endpoints failing recently after the healthy ones (see plan.ts); the weighted draw of ADR 0027 (docs/adr)
 * is not built yet, so the order stays deterministic.
 */
export function priceKey(price: EndpointPrice): bigint {
  return price.promptPerMillion + price.completionPerMillion;
}

function byPriceThenProvider(a: RankedEndpoint, b: RankedEndpoint): number {
  const pa = priceKey(a.endpoint.price);
  const pb = priceKey(b.endpoint.price);
  if (pa !== pb) return pa < pb ? -1 : 1;
  if (a.provider.slug !== b.provider.slug) return a.provider.slug < b.provider.slug ? -1 : 1;
  return a.endpoint.id < b.endpoint.id ? -1 : a.endpoint.id > b.endpoint.id ? 1 : 0;
}

function overriddenBaseUrl(provider: Provider, overrides: Record<string, string> | undefined): string {
  if (!overrides) return provider.baseUrl;
  return overrides[provider.slug] ?? overrides[provider.slug.replace(/-/g, "_")] ?? provider.baseUrl;
}
