import { z } from "zod";
import { dataOf, FREE_FORM, pageOf, route, timestamp } from "./route";

// ---- providers --------------------------------------------------------------------------------

/**
 * Providers the gateway has an adapter for: the only slugs a provider credential may name. The
 * gateway's provider adapters and the credential routes both read this one list.
 */
export const PROVIDER_SLUGS = [
  "openai",
  "anthropic",
  "google",
  "mistral",
  "groq",
  "deepseek",
  "xai",
  "together",
  "fireworks",
  "vllm",
  "ollama",
  // The clouds: their credentials are documents (below), not keys.
  "azure",
  "bedrock",
  "vertex",
] as const;

export type ProviderSlug = (typeof PROVIDER_SLUGS)[number];

export function isProviderSlug(value: string): value is ProviderSlug {
  return (PROVIDER_SLUGS as readonly string[]).includes(value);
}

// ---- cloud credentials ------------------------------------------------------------------------

/*
 * Credentials for the clouds organisations buy models through. Unlike a provider's API key, each is
 * a small document: where the account lives (endpoint, project, region) and how to prove who is
 * calling. The whole document is sealed at rest; the gateway shows only its settings.
 */

export const CLOUD_PROVIDERS = ["azure", "bedrock", "vertex"] as const;
export type CloudProvider = (typeof CLOUD_PROVIDERS)[number];

export function isCloudProvider(slug: string): slug is CloudProvider {
  return (CLOUD_PROVIDERS as readonly string[]).includes(slug);
}

const secret = (max = 8192) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((k) => k.trim() === k && !/[\r\n\0]/.test(k), { message: "must not contain surrounding spaces or line breaks" });

// Cloud regions are lower-case names: swedencentral, eu-central-1, europe-west4.
const region = z
  .string()
  .trim()
  .min(2)
  .max(64)
  .transform((r) => r.toLowerCase())
  .refine((r) => /^[a-z][a-z0-9-]*[a-z0-9]$/.test(r), { message: "expected a region name such as eu-central-1" });

const catalogModelId = z.string().regex(/^[a-z0-9][a-z0-9._-]*\/[a-z0-9][a-z0-9._:-]*$/, "expected a catalog model id such as openai/gpt-4o");

/**
 * Hosts of Azure OpenAI resources (public, US Government and China clouds, AI Foundry). An
 * organisation names its resource, so the gateway would otherwise POST prompts to any host it was
 * given; an operator who fronts Azure with a proxy of their own sets the provider's base URL instead.
 */
const AZURE_HOSTS = /\.(openai\.azure\.com|cognitiveservices\.azure\.com|services\.ai\.azure\.com|openai\.azure\.us|openai\.azure\.cn)$/;

export const azureCredentialSchema = z
  .strictObject({
    /** The resource's endpoint, e.g. `https://contoso-eu.openai.azure.com`. */
    endpoint: z
      .url({ protocol: /^https$/, hostname: AZURE_HOSTS, error: "expected the resource's https endpoint, e.g. https://contoso.openai.azure.com" })
      .transform((u) => new URL(u).origin),
    /** The Azure region the resource lives in; the catalog's endpoints for Azure carry it. */
    region,
    api_version: z.string().regex(/^\d{4}-\d{2}-\d{2}(-preview)?$|^v1$|^preview$/, "expected an API version such as 2024-10-21").default("2024-10-21"),
    /** Catalog model id → the deployment that serves it in this resource. */
    deployments: z
      .record(catalogModelId, z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "expected a deployment name (letters, digits, '.', '_', '-')"))
      .refine((d) => Object.keys(d).length > 0, { message: "name at least one deployment, e.g. {\"openai/gpt-4o\": \"gpt-4o\"}" }),
    api_key: secret().optional(),
    /** Entra ID client credentials, instead of an API key. */
    entra: z
      .strictObject({
        tenant_id: z.string().min(1).max(200),
        client_id: z.string().min(1).max(200),
        client_secret: secret(),
        /** Sovereign clouds sign in elsewhere (`https://login.microsoftonline.us`); default: the public cloud. */
        authority_host: z.url({ protocol: /^https$/ }).optional(),
      })
      .optional(),
  })
  .superRefine((c, ctx) => {
    if (!c.api_key === !c.entra) {
      ctx.addIssue({ code: "custom", path: ["api_key"], message: "give either api_key or entra (client credentials), not both" });
    }
  });

export const bedrockCredentialSchema = z.strictObject({
  region,
  access_key_id: z.string().regex(/^[A-Z0-9]{16,128}$/, "expected an AWS access key id (capital letters and digits)"),
  secret_access_key: secret(),
  session_token: secret(16384).optional(),
  /** A role to assume with the keys above before calling Bedrock. */
  role_arn: z.string().regex(/^arn:aws[a-z-]*:iam::\d{12}:role\/.+$/, "expected an IAM role ARN").optional(),
  external_id: z.string().min(2).max(1224).optional(),
});

// Google's key file: the fields read here are named, the file's others are kept as Google wrote them.
const serviceAccountFields = z
  .looseObject({
    type: z.literal("service_account"),
    client_email: z.string().email(),
    private_key: z.string().includes("PRIVATE KEY", { message: "expected a PEM private key" }),
    private_key_id: z.string().min(1).optional(),
    token_uri: z.url().optional(),
  })
  .meta({ description: "A service account's JSON key file (Google's format)", [FREE_FORM]: true });

export const vertexCredentialSchema = z.strictObject({
  project: z.string().regex(/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/, "expected a Google Cloud project id"),
  region,
  /** The service account's JSON key, as an object or as the file's text. */
  service_account: z.preprocess((v) => {
    if (typeof v !== "string") return v;
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return v;
    }
  }, serviceAccountFields),
});

export const CLOUD_SCHEMAS = {
  azure: azureCredentialSchema,
  bedrock: bedrockCredentialSchema,
  vertex: vertexCredentialSchema,
} as const;

/** A cloud credential document with the cloud it is for: what is sealed, and what the gateway opens. */
export type CloudCredential =
  | ({ provider: "azure" } & z.infer<typeof azureCredentialSchema>)
  | ({ provider: "bedrock" } & z.infer<typeof bedrockCredentialSchema>)
  | ({ provider: "vertex" } & z.infer<typeof vertexCredentialSchema>);

// ---- model filter -----------------------------------------------------------------------------

const modelPattern = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9._:/~@-]+\*?$/, "expected a model id such as openai/gpt-4o, or a prefix ending in *");

/**
 * `model_filter` of a provider credential: `allow` (when present and non-empty, only these
 * models) and `deny` (never these; deny wins). Entries are catalog model ids (`author/slug`), or
 * a prefix ending in `*` (`openai/gpt-4o*`).
 */
export const modelFilterSchema = z
  .object({
    allow: z.array(modelPattern).max(500).optional(),
    deny: z.array(modelPattern).max(500).optional(),
  })
  .strict();

// ---- bodies -----------------------------------------------------------------------------------

/** Fields of `POST /v1/provider-keys`: an API key, or a cloud's document under the cloud's name. */
export const CREDENTIAL_FIELDS = ["provider", "api_key", ...CLOUD_PROVIDERS, "name", "tier", "priority", "fallback_policy", "model_filter"] as const;

export const createCredentialBody = z
  .object({
    provider: z.string().refine(isProviderSlug, { message: `expected one of ${PROVIDER_SLUGS.join(", ")}` }),
    api_key: z
      .string()
      .min(1)
      .max(8192)
      .refine((k) => k.trim() === k && !/[\r\n\0]/.test(k), { message: "must not contain surrounding spaces or line breaks" })
      .optional(),
    // A cloud's credential document, under the cloud's own name (`"bedrock": {...}`).
    azure: CLOUD_SCHEMAS.azure.optional(),
    bedrock: CLOUD_SCHEMAS.bedrock.optional(),
    vertex: CLOUD_SCHEMAS.vertex.optional(),
    name: z.string().trim().min(1).max(200).nullable().optional(),
    tier: z.enum(["prioritized", "fallback"]).default("prioritized"),
    priority: z.number().int().min(-1_000_000).max(1_000_000).default(0),
    fallback_policy: z.enum(["platform", "none_for_models", "none_for_provider"]).default("platform"),
    model_filter: modelFilterSchema.default({}),
  })
  .superRefine((b, ctx) => {
    const provider: string = b.provider;
    const cloud = isCloudProvider(provider) ? provider : null;
    for (const other of CLOUD_PROVIDERS) {
      if (other !== cloud && b[other] !== undefined) {
        ctx.addIssue({ code: "custom", path: [other], message: `only for provider ${other}` });
      }
    }
    if (cloud && b[cloud] === undefined) {
      ctx.addIssue({ code: "custom", path: [cloud], message: `required for provider ${cloud}: the ${cloud} credential document` });
    }
    if (cloud && b.api_key !== undefined) {
      ctx.addIssue({ code: "custom", path: ["api_key"], message: `not used for provider ${cloud}; put its key inside "${cloud}"` });
    }
    if (!cloud && b.api_key === undefined) ctx.addIssue({ code: "custom", path: ["api_key"], message: "required" });
  });

/** `PATCH /v1/provider-keys/{id}`: only `disabled` changes (to change the key, add a new credential). */
export const patchCredentialBody = z.object({ disabled: z.boolean() });

// ---- answers ----------------------------------------------------------------------------------

/** What a route shows of a cloud credential: where it points, never how it proves who it is. */
export const cloudSettings = z
  .object({
    endpoint: z.string().optional(),
    region: z.string(),
    api_version: z.string().optional(),
    deployments: z.record(z.string(), z.string()).optional(),
    auth: z.enum(["api_key", "entra"]).optional(),
    tenant_id: z.string().optional(),
    client_id: z.string().optional(),
    authority_host: z.string().optional(),
    role_arn: z.string().optional(),
    project: z.string().optional(),
    client_email: z.string().optional(),
  })
  .meta({
    id: "CloudSettings",
    description: "Azure OpenAI: endpoint, region, api_version, deployments, auth (and the Entra ids); Bedrock: region (and role_arn); Vertex AI: project, region, client_email",
  });

export const credential = z
  .object({
    id: z.string(),
    provider_slug: z.enum(PROVIDER_SLUGS),
    name: z.string().nullable(),
    key_hint: z.string().nullable(),
    tier: z.enum(["prioritized", "fallback"]),
    priority: z.number().int(),
    fallback_policy: z.enum(["platform", "none_for_models", "none_for_provider"]),
    model_filter: modelFilterSchema,
    settings: cloudSettings.optional().meta({ description: "A cloud credential's showable part; absent for an API key" }),
    disabled: z.boolean(),
    created_at: timestamp,
    last_used_at: timestamp.nullable(),
  })
  .meta({ id: "ProviderCredential" });

// ---- the routes -------------------------------------------------------------------------------

// The console owns provider credentials; the gateway forwards these and reads the enabled ones over gRPC.
const management = { owner: "console", access: "management" } as const;

export const PROVIDER_KEY_ROUTES = [
  route({ ...management, permission: "read", method: "get", path: "/v1/provider-keys", summary: "List provider credentials (keys are never returned)", answer: pageOf(credential) }),
  route({ ...management, permission: "config:write", method: "post", path: "/v1/provider-keys", summary: "Add a provider credential", body: createCredentialBody, answer: dataOf(credential), status: 201, refused: [409] }),
  route({
    ...management,
    permission: "config:write",
    method: "patch",
    path: "/v1/provider-keys/:id",
    summary: "Enable or disable a provider credential",
    body: patchCredentialBody,
    answer: dataOf(z.object({ id: z.string(), disabled: z.boolean() })),
  }),
  route({ ...management, permission: "config:write", method: "delete", path: "/v1/provider-keys/:id", summary: "Delete a provider credential", answer: dataOf(z.object({ deleted: z.literal(true) })) }),
];
