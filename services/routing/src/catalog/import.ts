import { createHash } from "node:crypto";
import type { Db, Queryable } from "@router/db";
import { toNanos, type Clock, type Nanodollars } from "@router/money";
import { announceCatalogImport } from "./catalog-imported";
import { int8, type Int8 } from "./catalog-store";
import { parseCatalogFile, type CatalogFile, type EndpointEntry, type ModelEntry, type ProviderEntry } from "./catalog-file";

export { BUNDLED_CATALOG_FILE, parseCatalogFile, readCatalogFile, type CatalogFile } from "./catalog-file";

export interface ImportResult {
  /** The catalog revision this import produced (the newest `catalog_imports` id). */
  revision: bigint;
  providersChanged: number;
  modelsChanged: number;
  endpointsChanged: number;
  priceVersionsAdded: number;
  /** Providers, models and endpoints present before and absent from this file. */
  deactivated: number;
}

/**
 * Upserts a catalog (raw JSON text, parsed JSON, or an already validated `CatalogFile`) into the
 * routing schema. Idempotent: importing the same file again changes no row and adds no price
 * version. An endpoint whose price differs from its current price version gets a new version.
 * Rows absent from the file are deactivated, never deleted, so price history stays intact.
 * Expects the routing migrations to have run.
 */
export async function importCatalog(db: Db, catalogJson: unknown, clock: Clock): Promise<ImportResult> {
  const file = isCatalogFile(catalogJson) ? catalogJson : parseCatalogFile(catalogJson);
  const now = clock.now();
  const result = await db.tx(async (q) => {
    // Replicas that find an empty catalog on first start may import at the same time.
    await q.query("SELECT pg_advisory_xact_lock($1)", [advisoryKey(db.schema)]);
    const providersChanged = await countChanged(file.providers, (p) => upsertProvider(q, p, now));
    const modelsChanged = await countChanged(file.models, (m) => upsertModel(q, m, now));
    const endpointsChanged = await countChanged(file.endpoints, (e) => upsertEndpoint(q, e, now));
    const priceVersionsAdded = await addChangedPrices(q, file.endpoints, now);
    const deactivated = await deactivateMissing(q, file, now);
    const inserted = await q.query<{ id: Int8 }>(
      `INSERT INTO catalog_imports
         (imported_at, sha256, providers_changed, models_changed, endpoints_changed, price_versions_added, deactivated)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
      [now, file.sha256, providersChanged, modelsChanged, endpointsChanged, priceVersionsAdded, deactivated],
    );
    return {
      revision: int8(inserted.rows[0]?.id),
      providersChanged,
      modelsChanged,
      endpointsChanged,
      priceVersionsAdded,
      deactivated,
    };
  });
  await announceCatalogImport();
  return result;
}

function isCatalogFile(v: unknown): v is CatalogFile {
  return typeof v === "object" && v !== null && typeof (v as CatalogFile).sha256 === "string";
}

function advisoryKey(schema: string): string {
  return createHash("sha256").update(`router-catalog-import:${schema}`).digest().readBigInt64BE(0).toString();
}

async function countChanged<T>(rows: T[], upsert: (row: T) => Promise<boolean>): Promise<number> {
  let changed = 0;
  for (const row of rows) if (await upsert(row)) changed += 1;
  return changed;
}

// SQL NULL for null, jsonb text otherwise (JSON.stringify(null) would store a jsonb 'null').
function json(v: unknown): string | null {
  return v === null || v === undefined ? null : JSON.stringify(v);
}

// Each upsert writes only when something differs, so rowCount says whether the row changed.
async function upsertProvider(q: Queryable, p: ProviderEntry, now: Date): Promise<boolean> {
  const r = await q.query(
    `INSERT INTO providers AS t (slug, name, hq_country, datacenters, privacy_policy_url, tos_url, status_page_url,
                                 api_family, base_url, self_hosted, active, updated_at)
     VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8, $9, $10, true, $11)
     ON CONFLICT (slug) DO UPDATE SET
       name = EXCLUDED.name, hq_country = EXCLUDED.hq_country, datacenters = EXCLUDED.datacenters,
       privacy_policy_url = EXCLUDED.privacy_policy_url, tos_url = EXCLUDED.tos_url,
       status_page_url = EXCLUDED.status_page_url, api_family = EXCLUDED.api_family, base_url = EXCLUDED.base_url,
       self_hosted = EXCLUDED.self_hosted, active = true, updated_at = EXCLUDED.updated_at
     WHERE (t.name, t.hq_country, t.datacenters, t.privacy_policy_url, t.tos_url, t.status_page_url, t.api_family,
            t.base_url, t.self_hosted, t.active)
       IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.hq_country, EXCLUDED.datacenters, EXCLUDED.privacy_policy_url,
            EXCLUDED.tos_url, EXCLUDED.status_page_url, EXCLUDED.api_family, EXCLUDED.base_url, EXCLUDED.self_hosted, true)`,
    [
      p.slug,
      p.name,
      p.hq_country,
      json(p.datacenters),
      p.privacy_policy_url,
      p.tos_url,
      p.status_page_url,
      p.api_family,
      p.base_url,
      p.self_hosted,
      now,
    ],
  );
  return r.rowCount > 0;
}

async function upsertModel(q: Queryable, m: ModelEntry, now: Date): Promise<boolean> {
  const r = await q.query(
    `INSERT INTO models AS t (id, canonical_slug, name, created, description, context_length, architecture,
                              supported_parameters, default_parameters, resale_permitted, byok_only, is_free,
                              deprecation_date, aliases, active, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9::jsonb, $10, $11, $12, $13, $15::jsonb, true, $14)
     ON CONFLICT (id) DO UPDATE SET
       canonical_slug = EXCLUDED.canonical_slug, name = EXCLUDED.name, created = EXCLUDED.created,
       description = EXCLUDED.description, context_length = EXCLUDED.context_length,
       architecture = EXCLUDED.architecture, supported_parameters = EXCLUDED.supported_parameters,
       default_parameters = EXCLUDED.default_parameters, resale_permitted = EXCLUDED.resale_permitted,
       byok_only = EXCLUDED.byok_only, is_free = EXCLUDED.is_free, deprecation_date = EXCLUDED.deprecation_date,
       aliases = EXCLUDED.aliases, active = true, updated_at = EXCLUDED.updated_at
     WHERE (t.canonical_slug, t.name, t.created, t.description, t.context_length, t.architecture,
            t.supported_parameters, t.default_parameters, t.resale_permitted, t.byok_only, t.is_free,
            t.deprecation_date, t.aliases, t.active)
       IS DISTINCT FROM (EXCLUDED.canonical_slug, EXCLUDED.name, EXCLUDED.created, EXCLUDED.description,
            EXCLUDED.context_length, EXCLUDED.architecture, EXCLUDED.supported_parameters,
            EXCLUDED.default_parameters, EXCLUDED.resale_permitted, EXCLUDED.byok_only, EXCLUDED.is_free,
            EXCLUDED.deprecation_date, EXCLUDED.aliases, true)`,
    [
      m.id,
      m.canonical_slug,
      m.name,
      m.created === null ? null : String(m.created),
      m.description,
      m.context_length,
      json(m.architecture),
      json(m.supported_parameters),
      json(m.default_parameters),
      m.resale_permitted,
      m.byok_only,
      m.is_free,
      m.deprecation_date,
      now,
      JSON.stringify(m.aliases),
    ],
  );
  return r.rowCount > 0;
}

async function upsertEndpoint(q: Queryable, e: EndpointEntry, now: Date): Promise<boolean> {
  const r = await q.query(
    `INSERT INTO endpoints AS t (id, model_id, provider_slug, upstream_model, context_length, max_output_tokens,
                                 quantization, supported_parameters, zdr, no_training, deployment_region, api_family,
                                 active, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $10, $11, $12, $13, true, $9)
     ON CONFLICT (id) DO UPDATE SET
       model_id = EXCLUDED.model_id, provider_slug = EXCLUDED.provider_slug, upstream_model = EXCLUDED.upstream_model,
       context_length = EXCLUDED.context_length, max_output_tokens = EXCLUDED.max_output_tokens,
       quantization = EXCLUDED.quantization, supported_parameters = EXCLUDED.supported_parameters,
       zdr = EXCLUDED.zdr, no_training = EXCLUDED.no_training, deployment_region = EXCLUDED.deployment_region,
       api_family = EXCLUDED.api_family, active = true, updated_at = EXCLUDED.updated_at
     WHERE (t.model_id, t.provider_slug, t.upstream_model, t.context_length, t.max_output_tokens, t.quantization,
            t.supported_parameters, t.zdr, t.no_training, t.deployment_region, t.api_family, t.active)
       IS DISTINCT FROM (EXCLUDED.model_id, EXCLUDED.provider_slug, EXCLUDED.upstream_model, EXCLUDED.context_length,
            EXCLUDED.max_output_tokens, EXCLUDED.quantization, EXCLUDED.supported_parameters, EXCLUDED.zdr,
            EXCLUDED.no_training, EXCLUDED.deployment_region, EXCLUDED.api_family, true)`,
    [
      e.id,
      e.model,
      e.provider,
      e.upstream_model,
      e.context_length,
      e.max_output_tokens,
      e.quantization,
      json(e.supported_parameters),
      now,
      e.zdr,
      e.no_training,
      e.deployment_region,
      e.api_family,
    ],
  );
  return r.rowCount > 0;
}

interface CurrentPriceRow {
  id: string;
  prompt: Int8 | null;
  completion: Int8 | null;
  cached: Int8 | null;
  write_5m: Int8 | null;
  write_1h: Int8 | null;
  has_price: boolean;
}

async function addChangedPrices(q: Queryable, endpoints: EndpointEntry[], now: Date): Promise<number> {
  const current = new Map(
    (
      await q.query<CurrentPriceRow>(
        `SELECT e.id, pv.prompt_per_million AS prompt, pv.completion_per_million AS completion,
                pv.cached_prompt_per_million AS cached, pv.cache_write_5m_per_million AS write_5m,
                pv.cache_write_1h_per_million AS write_1h, pv.id IS NOT NULL AS has_price
           FROM endpoints e LEFT JOIN price_versions pv ON pv.id = e.price_version_id`,
      )
    ).rows.map((r) => [r.id, r]),
  );
  let added = 0;
  for (const e of endpoints) {
    const row = current.get(e.id);
    if (row?.has_price && samePrice(row, e)) continue;
    await q.query(
      `WITH pv AS (
         INSERT INTO price_versions (endpoint_id, prompt_per_million, completion_per_million, cached_prompt_per_million,
                                     cache_write_5m_per_million, cache_write_1h_per_million, effective_from)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id, endpoint_id)
       UPDATE endpoints SET price_version_id = pv.id FROM pv WHERE endpoints.id = pv.endpoint_id`,
      [
        e.id,
        e.prompt.toString(),
        e.completion.toString(),
        nullableNanos(e.cachedPrompt),
        nullableNanos(e.cacheWrite5m),
        nullableNanos(e.cacheWrite1h),
        now,
      ],
    );
    added += 1;
  }
  return added;
}

function samePrice(row: CurrentPriceRow, e: EndpointEntry): boolean {
  const nullable = (v: Int8 | null): Nanodollars | null => (v === null ? null : toNanos(v));
  return (
    toNanos(row.prompt) === e.prompt &&
    toNanos(row.completion) === e.completion &&
    nullable(row.cached) === e.cachedPrompt &&
    nullable(row.write_5m) === e.cacheWrite5m &&
    nullable(row.write_1h) === e.cacheWrite1h
  );
}

function nullableNanos(n: Nanodollars | null): string | null {
  return n === null ? null : n.toString();
}

async function deactivateMissing(q: Queryable, file: CatalogFile, now: Date): Promise<number> {
  const sets: Array<[table: string, key: string, ids: string[]]> = [
    ["endpoints", "id", file.endpoints.map((e) => e.id)],
    ["models", "id", file.models.map((m) => m.id)],
    ["providers", "slug", file.providers.map((p) => p.slug)],
  ];
  let count = 0;
  for (const [table, key, ids] of sets) {
    const r = await q.query(
      `UPDATE ${table} SET active = false, updated_at = $2
        WHERE active AND ${key} NOT IN (SELECT jsonb_array_elements_text($1::jsonb))`,
      [JSON.stringify(ids), now],
    );
    count += r.rowCount;
  }
  return count;
}
