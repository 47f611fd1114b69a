import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DomainError } from "@router/errors";
import { fromUsd, type Nanodollars } from "@router/money";
import { z } from "zod";

/** The catalog that ships with the service; imported on first start. */
export const BUNDLED_CATALOG_FILE = join(__dirname, "..", "..", "catalog", "catalog.json");

const PROVIDER_SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
// `author/slug`, optionally a free-tier style row such as `author/slug:free`.
const MODEL_ID = /^[a-z0-9][a-z0-9._-]*\/[a-z0-9][a-z0-9._-]*(:[a-z0-9]+)?$/;
const ENDPOINT_ID = /^ep_[a-z0-9][a-z0-9._-]*$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
// A provider's own model id: no author prefix, so it can never be read as a catalog id.
const MODEL_ALIAS = /^[a-z0-9][a-z0-9._-]{0,127}$/;

const httpUrl = z.url({ protocol: /^https?$/ });
const params = z.array(z.string().min(1));
// USD per million tokens in the file; a million dollars per million tokens is surely a typo.
const usdPerMillion = z.number().nonnegative().max(1_000_000);

// "bedrock" is Amazon Bedrock's Converse API; the others are the model makers' own formats.
const apiFamily = z.enum(["openai", "anthropic", "google", "bedrock"]);

const ProviderEntry = z.strictObject({
  slug: z.string().regex(PROVIDER_SLUG, "lowercase letters, digits and '-'"),
  name: z.string().min(1),
  hq_country: z.string().length(2).nullable(),
  datacenters: z.array(z.string().min(1)).nullable(),
  privacy_policy_url: httpUrl.nullable(),
  tos_url: httpUrl.nullable(),
  status_page_url: httpUrl.nullable(),
  api_family: apiFamily,
  base_url: httpUrl,
  self_hosted: z.boolean().default(false),
});

const ModelEntry = z.strictObject({
  id: z.string().regex(MODEL_ID, "must be author/slug in lowercase"),
  canonical_slug: z.string().min(1),
  name: z.string().min(1),
  created: z.number().int().nonnegative().nullable(),
  description: z.string().nullable(),
  context_length: z.number().int().positive().nullable(),
  architecture: z
    .strictObject({
      modality: z.string().optional(),
      input_modalities: z.array(z.string().min(1)).min(1),
      output_modalities: z.array(z.string().min(1)).min(1),
      tokenizer: z.string().optional(),
    })
    .nullable(),
  supported_parameters: params.nullable(),
  default_parameters: z.record(z.string(), z.unknown()).nullable(),
  resale_permitted: z.enum(["yes", "no", "via_reseller", "unknown"]),
  byok_only: z.boolean(),
  is_free: z.boolean(),
  deprecation_date: z.string().regex(ISO_DATE, "must be YYYY-MM-DD").nullable(),
  // The ids the model's author serves it by (`claude-sonnet-4-5-20250929`, `claude-sonnet-4-5`,
  // `gpt-4o-mini`): a request naming one of them is routed to this model.
  aliases: z.array(z.string().regex(MODEL_ALIAS, "lowercase letters, digits, '.', '_' and '-', no '/'")).default([]),
});

const EndpointEntry = z.strictObject({
  id: z.string().regex(ENDPOINT_ID, "must look like ep_<provider>_<model>"),
  model: z.string().min(1),
  provider: z.string().min(1),
  upstream_model: z.string().min(1),
  context_length: z.number().int().positive(),
  max_output_tokens: z.number().int().positive().nullable(),
  pricing: z.strictObject({
    prompt: usdPerMillion,
    completion: usdPerMillion,
    // null: cached prompt tokens cost the same as other prompt tokens.
    cached_prompt: usdPerMillion.nullable(),
    // Prompt tokens written to the provider's cache for 5 minutes / 1 hour (Anthropic lists 1.25x and
    // 2x the prompt price); null or absent: a write costs the same as other prompt tokens.
    cache_write_5m: usdPerMillion.nullable().default(null),
    cache_write_1h: usdPerMillion.nullable().default(null),
  }),
  quantization: z.string().min(1).nullable(),
  supported_parameters: params,
  // What the endpoint declares about the data it is sent; undeclared fails every privacy filter.
  zdr: z.boolean().default(false),
  no_training: z.boolean().default(false),
  deployment_region: z
    .string()
    .min(1)
    .transform((r) => r.toLowerCase())
    .nullable()
    .default(null),
  // The endpoint's wire format where it differs from its provider's (Claude on Bedrock or Vertex AI
  // speaks Anthropic's Messages body); null: the provider's.
  api_family: apiFamily.nullable().default(null),
});

const CatalogFileSchema = z.strictObject({
  version: z.literal(1),
  as_of: z.string().regex(ISO_DATE, "must be YYYY-MM-DD").optional(),
  providers: z.array(ProviderEntry).min(1),
  models: z.array(ModelEntry).min(1),
  endpoints: z.array(EndpointEntry).min(1),
});

export type ProviderEntry = z.infer<typeof ProviderEntry>;
export type ModelEntry = z.infer<typeof ModelEntry>;

export interface EndpointEntry extends Omit<z.infer<typeof EndpointEntry>, "pricing"> {
  /** Nanodollars per million tokens. */
  prompt: Nanodollars;
  completion: Nanodollars;
  cachedPrompt: Nanodollars | null;
  cacheWrite5m: Nanodollars | null;
  cacheWrite1h: Nanodollars | null;
}

/** A validated catalog file with prices converted to integer nanodollars per million tokens. */
export interface CatalogFile {
  providers: ProviderEntry[];
  models: ModelEntry[];
  endpoints: EndpointEntry[];
  /** Hash of the file's content, recorded with each import. */
  sha256: string;
}

/**
 * Validates a catalog (parsed JSON or its text). A bad file is a 400 whose message names the
 * entry, e.g. `catalog: endpoints[12] (ep_groq_x).pricing.prompt: ...`.
 */
export function parseCatalogFile(input: unknown): CatalogFile {
  const raw = typeof input === "string" ? parseJson(input) : input;
  const parsed = CatalogFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path ?? [];
    throw badEntry(describePath(raw, path), issue?.message ?? "invalid");
  }
  const file = parsed.data;
  checkUnique(file.providers.map((p) => p.slug), "providers", "slug");
  checkUnique(file.models.map((m) => m.id), "models", "id");
  checkUnique(file.endpoints.map((e) => e.id), "endpoints", "id");
  const providers = new Set(file.providers.map((p) => p.slug));
  const models = new Set(file.models.map((m) => m.id));
  const served = new Set<string>();
  file.endpoints.forEach((e, i) => {
    if (!models.has(e.model)) throw badEntry(`endpoints[${i}] (${e.id}).model`, `unknown model ${e.model}`);
    if (!providers.has(e.provider)) throw badEntry(`endpoints[${i}] (${e.id}).provider`, `unknown provider ${e.provider}`);
    served.add(e.model);
  });
  file.models.forEach((m, i) => {
    if (!served.has(m.id)) throw badEntry(`models[${i}] (${m.id})`, "no endpoint serves this model");
  });
  checkAliases(file.models);
  return {
    providers: file.providers,
    models: file.models,
    endpoints: file.endpoints.map(({ pricing, ...e }) => ({
      ...e,
      prompt: fromUsd(pricing.prompt),
      completion: fromUsd(pricing.completion),
      cachedPrompt: pricing.cached_prompt === null ? null : fromUsd(pricing.cached_prompt),
      cacheWrite5m: pricing.cache_write_5m === null ? null : fromUsd(pricing.cache_write_5m),
      cacheWrite1h: pricing.cache_write_1h === null ? null : fromUsd(pricing.cache_write_1h),
    })),
    sha256: createHash("sha256").update(JSON.stringify(raw)).digest("hex"),
  };
}

/** Reads and validates a catalog file from disk. */
export function readCatalogFile(path: string): CatalogFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new DomainError("invalid_request", `catalog: cannot read ${path}`, { cause: err });
  }
  return parseCatalogFile(text);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new DomainError("invalid_request", `catalog: not valid JSON (${(err as Error).message})`, { cause: err });
  }
}

function badEntry(entry: string, message: string): DomainError {
  return new DomainError("invalid_request", `catalog: ${entry}: ${message}`, { details: { entry } });
}

function checkUnique(values: string[], list: string, key: string): void {
  const seen = new Set<string>();
  values.forEach((v, i) => {
    if (seen.has(v)) throw badEntry(`${list}[${i}].${key}`, `duplicate ${key} ${v}`);
    seen.add(v);
  });
}

// A name must mean one model: an alias may equal no model's id and no other alias.
function checkAliases(models: readonly ModelEntry[]): void {
  const owner = new Map<string, string>(models.map((m) => [m.id, `the id of ${m.id}`]));
  models.forEach((m, i) =>
    m.aliases.forEach((alias, j) => {
      const taken = owner.get(alias);
      if (taken) throw badEntry(`models[${i}] (${m.id}).aliases[${j}]`, `alias ${alias} is already ${taken}`);
      owner.set(alias, `an alias of ${m.id}`);
    }),
  );
}

// `["endpoints", 3, "pricing", "prompt"]` → `endpoints[3] (ep_x).pricing.prompt`: the entry's own id
// makes a bad row findable in a file of hundreds.
function describePath(raw: unknown, path: readonly PropertyKey[]): string {
  const [list, index, ...rest] = path;
  if (typeof list !== "string") return "(root)";
  if (typeof index !== "number") return [list, index].filter((p) => p !== undefined).map(String).join(".");
  const entry = (raw as Record<string, unknown>)[list];
  const row = Array.isArray(entry) ? (entry[index] as unknown) : undefined;
  const id = row && typeof row === "object" ? ((row as Record<string, unknown>).id ?? (row as Record<string, unknown>).slug) : undefined;
  const head = `${list}[${index}]${typeof id === "string" ? ` (${id})` : ""}`;
  return rest.length ? `${head}.${rest.map(String).join(".")}` : head;
}
