import type { Db } from "@router/db";
import { toNanos, type Nanodollars } from "@router/money";

export type ApiFamily = "openai" | "anthropic" | "google" | "bedrock";

export interface Provider {
  slug: string;
  name: string;
  hqCountry: string | null;
  datacenters: string[] | null;
  privacyPolicyUrl: string | null;
  tosUrl: string | null;
  statusPageUrl: string | null;
  apiFamily: ApiFamily;
  baseUrl: string;
  selfHosted: boolean;
}

export interface Architecture {
  modality?: string;
  input_modalities: string[];
  output_modalities: string[];
  tokenizer?: string;
}

export interface Model {
  id: string;
  canonicalSlug: string;
  name: string;
  /** Unix seconds. */
  created: number | null;
  description: string | null;
  contextLength: number | null;
  architecture: Architecture | null;
  supportedParameters: string[] | null;
  defaultParameters: Record<string, unknown> | null;
  resalePermitted: "yes" | "no" | "via_reseller" | "unknown";
  byokOnly: boolean;
  isFree: boolean;
  deprecationDate: string | null;
  /** The ids its author serves it by; each names this model and no other. */
  aliases: readonly string[];
}

export interface EndpointPrice {
  /** Nanodollars per million tokens. */
  promptPerMillion: Nanodollars;
  completionPerMillion: Nanodollars;
  /** Null: cached prompt tokens cost the same as other prompt tokens. */
  cachedPromptPerMillion: Nanodollars | null;
  /** Prompt tokens written to the cache for 5 minutes / 1 hour; null: the same as other prompt tokens. */
  cacheWrite5mPerMillion: Nanodollars | null;
  cacheWrite1hPerMillion: Nanodollars | null;
  priceVersionId: bigint;
}

export interface Endpoint {
  id: string;
  modelId: string;
  providerSlug: string;
  upstreamModel: string;
  contextLength: number;
  maxOutputTokens: number | null;
  quantization: string | null;
  supportedParameters: string[];
  price: EndpointPrice;
  /** Declares zero data retention. */
  zdr: boolean;
  /** Declares it never trains on (or keeps for training) what it is sent. */
  noTraining: boolean;
  /** Where it serves from, lower case; null when undeclared. */
  deploymentRegion: string | null;
  /** Its wire format where it differs from its provider's; null: the provider's. */
  apiFamily: ApiFamily | null;
}

/** The active catalog as stored, at one revision. */
export interface CatalogRows {
  revision: bigint;
  providers: Provider[];
  models: Model[];
  endpoints: Endpoint[];
}

export type Int8 = string | number | bigint;

/** An int8 column as bigint (pg parses it already; PGlite's API may hand back a number). */
export function int8(v: Int8 | null | undefined): bigint {
  if (v === null || v === undefined) return 0n;
  return typeof v === "bigint" ? v : BigInt(v);
}

interface ProviderRecord {
  slug: string;
  name: string;
  hq_country: string | null;
  datacenters: string[] | null;
  privacy_policy_url: string | null;
  tos_url: string | null;
  status_page_url: string | null;
  api_family: ApiFamily;
  base_url: string;
  self_hosted: boolean;
}

interface ModelRecord {
  id: string;
  canonical_slug: string;
  name: string;
  created: Int8 | null;
  description: string | null;
  context_length: number | null;
  architecture: Architecture | null;
  supported_parameters: string[] | null;
  default_parameters: Record<string, unknown> | null;
  resale_permitted: Model["resalePermitted"];
  byok_only: boolean;
  is_free: boolean;
  deprecation_date: string | null;
  aliases: string[];
}

interface EndpointRecord {
  id: string;
  model_id: string;
  provider_slug: string;
  upstream_model: string;
  context_length: number;
  max_output_tokens: number | null;
  quantization: string | null;
  supported_parameters: string[];
  zdr: boolean;
  no_training: boolean;
  deployment_region: string | null;
  api_family: ApiFamily | null;
  price_version_id: Int8;
  prompt_per_million: Int8;
  completion_per_million: Int8;
  cached_prompt_per_million: Int8 | null;
  cache_write_5m_per_million: Int8 | null;
  cache_write_1h_per_million: Int8 | null;
}

/** The newest import id; 0 before the first import. */
export async function catalogRevision(db: Db): Promise<bigint> {
  const r = await db.query<{ revision: Int8 }>("SELECT coalesce(max(id), 0) AS revision FROM catalog_imports");
  return int8(r.rows[0]?.revision);
}

/** Reads every active row in one consistent view (an import may commit between statements otherwise). */
export async function loadCatalog(db: Db): Promise<CatalogRows> {
  return db.tx(async (q) => {
    await q.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    const revision = await q.query<{ revision: Int8 }>("SELECT coalesce(max(id), 0) AS revision FROM catalog_imports");
    const providers = await q.query<ProviderRecord>(
      `SELECT slug, name, hq_country, datacenters, privacy_policy_url, tos_url, status_page_url, api_family, base_url,
              self_hosted
         FROM providers WHERE active ORDER BY slug`,
    );
    const models = await q.query<ModelRecord>(
      `SELECT id, canonical_slug, name, created, description, context_length, architecture, supported_parameters,
              default_parameters, resale_permitted, byok_only, is_free, deprecation_date, aliases
         FROM models WHERE active ORDER BY id`,
    );
    const endpoints = await q.query<EndpointRecord>(
      `SELECT e.id, e.model_id, e.provider_slug, e.upstream_model, e.context_length, e.max_output_tokens,
              e.quantization, e.supported_parameters, e.zdr, e.no_training, e.deployment_region, e.api_family, e.price_version_id,
              pv.prompt_per_million,
              pv.completion_per_million, pv.cached_prompt_per_million, pv.cache_write_5m_per_million,
              pv.cache_write_1h_per_million
         FROM endpoints e
         JOIN price_versions pv ON pv.id = e.price_version_id
         JOIN models m ON m.id = e.model_id AND m.active
         JOIN providers p ON p.slug = e.provider_slug AND p.active
        WHERE e.active
        ORDER BY e.id`,
    );
    return {
      revision: int8(revision.rows[0]?.revision),
      providers: providers.rows.map(toProvider),
      models: models.rows.map(toModel),
      endpoints: endpoints.rows.map(toEndpoint),
    };
  });
}

function toProvider(r: ProviderRecord): Provider {
  return {
    slug: r.slug,
    name: r.name,
    hqCountry: r.hq_country,
    datacenters: r.datacenters,
    privacyPolicyUrl: r.privacy_policy_url,
    tosUrl: r.tos_url,
    statusPageUrl: r.status_page_url,
    apiFamily: r.api_family,
    baseUrl: r.base_url,
    selfHosted: r.self_hosted,
  };
}

function toModel(r: ModelRecord): Model {
  return {
    id: r.id,
    canonicalSlug: r.canonical_slug,
    name: r.name,
    created: r.created === null ? null : Number(r.created),
    description: r.description,
    contextLength: r.context_length,
    architecture: r.architecture,
    supportedParameters: r.supported_parameters,
    defaultParameters: r.default_parameters,
    resalePermitted: r.resale_permitted,
    byokOnly: r.byok_only,
    isFree: r.is_free,
    deprecationDate: r.deprecation_date,
    aliases: r.aliases,
  };
}

function toEndpoint(r: EndpointRecord): Endpoint {
  return {
    id: r.id,
    modelId: r.model_id,
    providerSlug: r.provider_slug,
    upstreamModel: r.upstream_model,
    contextLength: r.context_length,
    maxOutputTokens: r.max_output_tokens,
    quantization: r.quantization,
    supportedParameters: r.supported_parameters,
    zdr: r.zdr,
    noTraining: r.no_training,
    deploymentRegion: r.deployment_region,
    apiFamily: r.api_family,
    price: {
      promptPerMillion: toNanos(r.prompt_per_million),
      completionPerMillion: toNanos(r.completion_per_million),
      cachedPromptPerMillion: nullableNanos(r.cached_prompt_per_million),
      cacheWrite5mPerMillion: nullableNanos(r.cache_write_5m_per_million),
      cacheWrite1hPerMillion: nullableNanos(r.cache_write_1h_per_million),
      priceVersionId: int8(r.price_version_id),
    },
  };
}

function nullableNanos(v: Int8 | null): Nanodollars | null {
  return v === null ? null : toNanos(v);
}
