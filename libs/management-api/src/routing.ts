import { BUILTIN_DETECTORS, patternProblem } from "@router/content-filter";
import { providerPreferencesSchema, reasoningSchema, ROUTING_STABILITIES, samplingSettings, tokenCount } from "@router/request-settings";
import { z } from "zod";
import { dataOf, deletedOf, FREE_FORM, freeForm, route, timestamp, usd } from "./route";

// ---- the public catalog -------------------------------------------------------------------

const count = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,9}$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

export const listModelsQuery = z.object({
  limit: count(1, 500).default(100),
  offset: count(0, 1_000_000_000).default(0),
  q: z.string().max(200).optional(),
  model_authors: z.string().max(2000).optional(),
  context: count(0, 1_000_000_000).optional(),
  // Any value is accepted; one that is not recognised sorts by id.
  sort: z.string().max(64).optional(),
});

/** A price as the catalog shows it: USD per token as decimal strings, plus USD per million. */
export const catalogPrice = z.object({
  prompt: z.string(),
  completion: z.string(),
  input_cache_read: z.string().optional(),
  input_cache_write: z.string().optional(),
  input_cache_write_1h: z.string().optional(),
  prompt_per_million: usd,
  completion_per_million: usd,
});

/** OpenAI's Model object (`id`, `object`, `created`, `owned_by`) with the catalog's own fields. */
export const catalogModel = z.object({
  id: z.string(),
  object: z.literal("model"),
  created: z.number().int().nullable(),
  owned_by: z.string(),
  canonical_slug: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  context_length: z.number().int().nullable(),
  architecture: z
    .object({
      modality: z.string().optional(),
      input_modalities: z.array(z.string()),
      output_modalities: z.array(z.string()),
      tokenizer: z.string().optional(),
    })
    .nullable(),
  supported_parameters: z.array(z.string()).nullable(),
  default_parameters: freeForm("the author's default sampling parameters, as the catalog holds them").nullable(),
  resale_permitted: z.enum(["yes", "no", "via_reseller", "unknown"]),
  byok_only: z.boolean(),
  is_free: z.boolean(),
  deprecation_date: z.string().nullable(),
  aliases: z.array(z.string()),
});

export const modelList = z.object({
  object: z.literal("list"),
  data: z.array(catalogModel.extend({ pricing: catalogPrice.nullable() })),
  total: z.number().int(),
});

export const modelEndpoint = z.object({
  endpoint_id: z.string(),
  model_id: z.string(),
  provider: z.string(),
  provider_name: z.string(),
  upstream_model: z.string(),
  context_length: z.number().int(),
  max_output_tokens: z.number().int().nullable(),
  quantization: z.string().nullable(),
  supported_parameters: z.array(z.string()),
  pricing: catalogPrice,
  uptime: z.number().nullable().meta({ description: "share of the last 24 h's attempts that succeeded" }),
  latency_ms: z.number().nullable(),
  tool_call_reliability: z.number().nullable(),
});

export const catalogProvider = z.object({
  slug: z.string(),
  name: z.string(),
  hq_country: z.string().nullable(),
  datacenters: z.array(z.string()).nullable(),
  privacy_policy_url: z.string().nullable(),
  tos_url: z.string().nullable(),
  status_page_url: z.string().nullable(),
});

// ---- account routing defaults ---------------------------------------------------------------

export const DEFAULT_SORTS = ["price", "throughput", "latency"] as const;
/** At most this many account fallback models; only the first few can ever fit the depth of three. */
export const MAX_FALLBACK_MODELS = 10;
const defaultsModelId = z.string().min(1, "must not be empty").max(256);

/** `PUT /v1/routing/defaults`: the whole new set (an omitted field is cleared; an unknown one is refused). */
export const routingDefaultsBody = z.object({
  default_model: defaultsModelId.nullable().optional(),
  fallback_models: z.array(defaultsModelId).max(MAX_FALLBACK_MODELS, `at most ${MAX_FALLBACK_MODELS} models`).optional(),
  default_sort: z.enum(DEFAULT_SORTS).nullable().optional(),
  lock_sort: z.boolean().optional(),
});

export const routingDefaults = z.object({
  default_model: z.string().nullable(),
  fallback_models: z.array(z.string()),
  default_sort: z.enum(DEFAULT_SORTS).nullable(),
  lock_sort: z.boolean(),
  updated_at: timestamp.nullable(),
});

// ---- presets --------------------------------------------------------------------------------

export const PRESET_SLUG = /^[a-z0-9-]{1,64}$/;
export const MAX_PRESET_SLUG = 64;
const presetModelId = z.string().trim().min(1).max(256);

/** A preset's settings: the request fields a preset may fill in, with the chat route's bounds. */
export const presetSettings = z.object({
  model: presetModelId.optional(),
  models: z.array(presetModelId).max(16).optional(),
  ...samplingSettings,
  max_tokens: tokenCount.optional(),
  provider: providerPreferencesSchema.optional(),
  reasoning: reasoningSchema.optional(),
  routing_stability: z.enum(ROUTING_STABILITIES).optional(),
});

/**
 * A preset `body` as written: a JSON object whose setting fields (`presetSettings`) are kept and
 * validated, and every other field (a whole request body is accepted) dropped and named.
 */
export const presetBodyField = z
  .record(z.string(), z.unknown(), { error: (issue) => (issue.input === undefined ? "required" : "expected a JSON object") })
  .meta({
    description: "request settings (model, models, sampling, max_tokens, provider, reasoning, routing_stability); any other field is dropped and named in `dropped`",
    [FREE_FORM]: true,
  });

const presetName = z.string().trim().min(1, "must not be empty").max(80);
const presetDescription = z.string().max(1000).nullable();
const presetNote = z.string().max(500).nullable();

export const createPresetBody = z.strictObject({
  slug: z.string().max(MAX_PRESET_SLUG, `at most ${MAX_PRESET_SLUG} characters`).regex(PRESET_SLUG, "lower-case letters, digits and hyphens only"),
  name: presetName,
  description: presetDescription.optional(),
  body: presetBodyField,
});
export const presetVersionBody = z.strictObject({
  body: presetBodyField,
  note: presetNote.optional(),
  name: presetName.optional(),
  description: presetDescription.optional(),
});
export const revertPresetBody = z.strictObject({ version: z.number().int().min(1), note: presetNote.optional() });

export const preset = z.object({
  slug: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  version: z.number().int(),
  body: presetSettings,
  reference: z.string().meta({ description: "what a request names as its model: `@preset/{slug}`" }),
  created_at: timestamp,
  updated_at: timestamp,
});
export const presetVersion = z.object({ version: z.number().int(), body: presetSettings, note: z.string().nullable(), created_at: timestamp });
/** A written preset, with the fields of the written body that were not settings. */
export const writtenPreset = preset.extend({ dropped: z.array(z.string()) });

// ---- guardrails -----------------------------------------------------------------------------

const MODEL_AUTHOR = /^[a-z0-9][a-z0-9._-]*$/;
const guardrailList = (item: z.ZodType<string>) => z.array(item).max(100).default([]);
export const FILTER_ACTIONS = ["block", "redact", "flag"] as const;

export const contentFilterRule = z.strictObject({
  name: z.string().trim().min(1).max(80).optional(),
  pattern: z
    .string()
    .min(1)
    .max(500)
    .superRefine((pattern, ctx) => {
      const problem = patternProblem(pattern);
      if (problem !== null) ctx.addIssue({ code: "custom", message: problem });
    }),
  action: z.enum(FILTER_ACTIONS),
});

export const GUARDRAIL_RESETS = ["daily", "weekly", "monthly", "lifetime"] as const;

export const guardrailBody = z.strictObject({
  name: z.string().trim().min(1, "must not be empty").max(80),
  limit_usd: z.number().min(0).max(1_000_000_000).optional(),
  reset_interval: z.enum(GUARDRAIL_RESETS).optional(),
  allowed_models: guardrailList(z.string().min(1).max(200)),
  allowed_providers: guardrailList(z.string().min(1).max(64)),
  allowed_data_regions: guardrailList(z.string().trim().min(1).max(64).transform((r) => r.toLowerCase())),
  include_byok_in_budgets: z.boolean().default(false),
  // Model authors (the privacy policy's groups) whose models must route to ZDR endpoints.
  enforce_zdr: z.record(z.string().regex(MODEL_AUTHOR, "a model author such as openai"), z.boolean()).default({}),
  content_filter_builtins: z.array(z.enum(BUILTIN_DETECTORS)).max(BUILTIN_DETECTORS.length).default([]),
  content_filters: z.array(contentFilterRule).max(50).default([]),
  filter_allowlist: guardrailList(z.string().min(1).max(200)),
});

export const SUBJECT_TYPES = ["key", "member"] as const;
export const assignmentBody = z.strictObject({
  subject_type: z.enum(SUBJECT_TYPES),
  subject_id: z.string().trim().min(1).max(200),
});
const assignment = z.object({ subject_type: z.enum(SUBJECT_TYPES), subject_id: z.string() });

export const guardrail = z.object({
  id: z.string(),
  name: z.string(),
  model_allowlist: z.array(z.string()),
  provider_allowlist: z.array(z.string()),
  allowed_data_regions: z.array(z.string()),
  budget_nanodollars: z.string().nullable(),
  budget_reset: z.enum(GUARDRAIL_RESETS).nullable(),
  include_byok_spend: z.boolean(),
  zdr_flags: z.record(z.string(), z.boolean()),
  content_filter_builtins: z.array(z.string()),
  content_filters: z.array(z.object({ name: z.string().optional(), pattern: z.string(), action: z.enum(FILTER_ACTIONS) })),
  filter_allowlist: z.array(z.string()),
  created_at: timestamp,
  assignments: z.array(assignment),
});

// ---- the privacy policy ---------------------------------------------------------------------

// Strict: an unknown field is a 400, and an omitted one is off.
export const privacyPolicyBody = z.strictObject({
  zdr: z.boolean().default(false),
  zdr_groups: z.array(z.string().min(1).max(100)).max(200).default([]),
  deny_training: z.boolean().default(false),
  regions: z.array(z.string().trim().min(1).max(64).transform((r) => r.toLowerCase())).max(100).default([]),
});

export const privacyPolicy = z.object({ zdr: z.boolean(), zdr_groups: z.array(z.string()), deny_training: z.boolean(), regions: z.array(z.string()) });
export const eligibilityCounts = z.object({ available: z.number().int(), unavailable: z.number().int() });
/** What a policy leaves of the catalog; the preview names each model it removes and why. */
export const eligibility = eligibilityCounts.extend({
  excluded: z.array(z.object({ model_id: z.string(), constraints: z.array(z.string()) })),
});
export const privacyState = z.object({
  policy: privacyPolicy,
  eligibility: eligibilityCounts,
  regions: z.array(z.string()),
  groups: z.array(z.object({ group: z.string(), models: z.number().int() })),
});

// ---- the routes -----------------------------------------------------------------------------

const owner = "routing" as const;
const m = { owner, access: "management" as const };
/** Anthropic's SDKs send it on every call: routing answers them in Anthropic's Models API shape. */
const catalogHeaders = ["anthropic-version"] as const;
const catalog = { owner, access: "public" as const, permission: null, passHeaders: catalogHeaders };

export const ROUTING_ROUTES = [
  route({ ...catalog, method: "get", path: "/v1/models", summary: "List models", query: listModelsQuery, answer: modelList }),
  route({ ...catalog, method: "get", path: "/v1/models/:author/:slug", summary: "Get a model", answer: catalogModel }),
  route({ ...catalog, method: "get", path: "/v1/models/:id", summary: "Get a model by an encoded id (`openai%2Fgpt-4o`) or an alias", answer: catalogModel }),
  route({ ...catalog, method: "get", path: "/v1/models/:author/:slug/endpoints", summary: "A model's endpoints", answer: dataOf(z.array(modelEndpoint)) }),
  route({ ...catalog, method: "get", path: "/v1/models/:id/endpoints", summary: "The endpoints of a model named by an encoded id or an alias", answer: dataOf(z.array(modelEndpoint)) }),
  route({ ...catalog, method: "get", path: "/v1/providers", summary: "List providers", answer: dataOf(z.array(catalogProvider)) }),

  route({ ...m, permission: "read", method: "get", path: "/v1/routing/defaults", summary: "Account routing defaults", answer: dataOf(routingDefaults) }),
  route({ ...m, permission: "org:write", method: "put", path: "/v1/routing/defaults", summary: "Change the account routing defaults", body: routingDefaultsBody, answer: dataOf(routingDefaults) }),

  route({ ...m, permission: "read", method: "get", path: "/v1/presets", summary: "List presets", answer: dataOf(z.array(preset)) }),
  route({ ...m, permission: "config:write", method: "post", path: "/v1/presets", summary: "Create a preset", body: createPresetBody, answer: dataOf(writtenPreset), status: 201 }),
  route({ ...m, permission: "read", method: "get", path: "/v1/presets/:slug", summary: "A preset and its history", answer: dataOf(preset.extend({ versions: z.array(presetVersion) })) }),
  route({ ...m, permission: "config:write", method: "delete", path: "/v1/presets/:slug", summary: "Delete a preset", answer: dataOf(deletedOf("slug")) }),
  route({ ...m, permission: "config:write", method: "post", path: "/v1/presets/:slug/versions", summary: "Save a new version of a preset", body: presetVersionBody, answer: dataOf(writtenPreset), status: 201 }),
  route({ ...m, permission: "config:write", method: "post", path: "/v1/presets/:slug/revert", summary: "Revert a preset to an earlier version (as a new version)", body: revertPresetBody, answer: dataOf(preset), status: 201 }),

  route({ ...m, permission: "read", method: "get", path: "/v1/guardrails", summary: "Guardrails", answer: dataOf(z.array(guardrail)) }),
  route({ ...m, permission: "org:write", method: "post", path: "/v1/guardrails", summary: "Create a guardrail", body: guardrailBody, answer: dataOf(guardrail), status: 201 }),
  route({ ...m, permission: "org:write", method: "delete", path: "/v1/guardrails/:id", summary: "Delete a guardrail", answer: dataOf(deletedOf("id")) }),
  route({
    ...m,
    permission: "org:write",
    method: "post",
    path: "/v1/guardrails/:id/assignments",
    summary: "Assign a guardrail to a key or a member",
    body: assignmentBody,
    answer: dataOf(assignment.extend({ guardrail_id: z.string() })),
    status: 201,
  }),

  route({ ...m, permission: "read", method: "get", path: "/v1/privacy", summary: "The account privacy policy, with eligibility", answer: dataOf(privacyState) }),
  route({
    ...m,
    permission: "org:write",
    method: "put",
    path: "/v1/privacy",
    summary: "Replace the account privacy policy",
    body: privacyPolicyBody,
    answer: dataOf(z.object({ policy: privacyPolicy, eligibility: eligibilityCounts })),
  }),
  route({ ...m, permission: "org:write", method: "post", path: "/v1/privacy/preview", summary: "Preview a privacy policy before saving it", body: privacyPolicyBody, answer: dataOf(eligibility) }),
];

