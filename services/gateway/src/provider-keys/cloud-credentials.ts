import { z } from "zod";

/**
 * Credentials for the clouds organisations buy models through. Unlike a provider's API key, each is
 * a small document: where the account lives (endpoint, project, region) and how to prove who is
 * calling. The whole document is sealed at rest; `settingsOf` is the part a route may show.
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

const serviceAccountFields = z.looseObject({
  type: z.literal("service_account"),
  client_email: z.string().email(),
  private_key: z.string().includes("PRIVATE KEY", { message: "expected a PEM private key" }),
  private_key_id: z.string().min(1).optional(),
  token_uri: z.url().optional(),
});

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

export type AzureCredential = z.infer<typeof azureCredentialSchema>;
export type BedrockCredential = z.infer<typeof bedrockCredentialSchema>;
export type VertexCredential = z.infer<typeof vertexCredentialSchema>;

export type CloudCredential =
  | ({ provider: "azure" } & AzureCredential)
  | ({ provider: "bedrock" } & BedrockCredential)
  | ({ provider: "vertex" } & VertexCredential);

export const CLOUD_SCHEMAS = {
  azure: azureCredentialSchema,
  bedrock: bedrockCredentialSchema,
  vertex: vertexCredentialSchema,
} as const;

/** The credential's last four characters of something that names it without being secret. */
export function cloudKeyHint(c: CloudCredential): string {
  const last4 = (s: string | undefined): string => (s && s.length >= 8 ? s.slice(-4) : "");
  switch (c.provider) {
    case "azure":
      return c.api_key ? last4(c.api_key) : last4(c.entra?.client_id);
    case "bedrock":
      return last4(c.access_key_id);
    case "vertex":
      return last4(c.service_account.private_key_id);
  }
}

/** What a route may show of a cloud credential: where it points, never how it proves who it is. */
export function settingsOf(c: CloudCredential): Record<string, unknown> {
  switch (c.provider) {
    case "azure":
      return {
        endpoint: c.endpoint,
        region: c.region,
        api_version: c.api_version,
        deployments: c.deployments,
        auth: c.api_key ? "api_key" : "entra",
        ...(c.entra ? { tenant_id: c.entra.tenant_id, client_id: c.entra.client_id, authority_host: c.entra.authority_host } : {}),
      };
    case "bedrock":
      return { region: c.region, ...(c.role_arn ? { role_arn: c.role_arn } : {}) };
    case "vertex":
      return { project: c.project, region: c.region, client_email: c.service_account.client_email };
  }
}

/** Reads a sealed cloud document back; throws when it is not one (a row sealed by other code). */
export function openedCloudCredential(provider: CloudProvider, text: string): CloudCredential {
  const parsed = CLOUD_SCHEMAS[provider].parse(JSON.parse(text));
  return { provider, ...parsed } as CloudCredential;
}
