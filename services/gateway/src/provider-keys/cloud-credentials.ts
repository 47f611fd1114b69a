import { providerKeys } from "@router/management-api";
import type { z } from "zod";

/**
 * Credentials for the clouds organisations buy models through. Unlike a provider's API key, each is
 * a small document: where the account lives (endpoint, project, region) and how to prove who is
 * calling. The whole document is sealed at rest; `settingsOf` is the part a route may show.
 */

// The documents' schemas are the credential routes' description's (@router/management-api).
export const { CLOUD_PROVIDERS, isCloudProvider, azureCredentialSchema, bedrockCredentialSchema, vertexCredentialSchema, CLOUD_SCHEMAS } = providerKeys;
export type CloudProvider = providerKeys.CloudProvider;

export type AzureCredential = z.infer<typeof azureCredentialSchema>;
export type BedrockCredential = z.infer<typeof bedrockCredentialSchema>;
export type VertexCredential = z.infer<typeof vertexCredentialSchema>;

export type CloudCredential =
  | ({ provider: "azure" } & AzureCredential)
  | ({ provider: "bedrock" } & BedrockCredential)
  | ({ provider: "vertex" } & VertexCredential);

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
