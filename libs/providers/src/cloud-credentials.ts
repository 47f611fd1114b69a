import { providerKeys } from "@router/management-api";
import type { z } from "zod";

/**
 * Credentials for the clouds organisations buy models through. Unlike a provider's API key, each is
 * a small document: where the account lives (endpoint, project, region) and how to prove who is
 * calling. The whole document is sealed at rest (the console seals it, with the part a route may
 * show kept beside it); the gateway opens it to dispatch.
 */

// The documents' schemas are the credential routes' description's (@router/management-api).
export const { CLOUD_PROVIDERS, isCloudProvider, azureCredentialSchema, bedrockCredentialSchema, vertexCredentialSchema, CLOUD_SCHEMAS } = providerKeys;
export type CloudProvider = providerKeys.CloudProvider;

export type AzureCredential = z.infer<typeof azureCredentialSchema>;
export type BedrockCredential = z.infer<typeof bedrockCredentialSchema>;
export type VertexCredential = z.infer<typeof vertexCredentialSchema>;

export type CloudCredential = providerKeys.CloudCredential;

/** Reads a sealed cloud document back; throws when it is not one (a row sealed by other code). */
export function openedCloudCredential(provider: CloudProvider, text: string): CloudCredential {
  const parsed = CLOUD_SCHEMAS[provider].parse(JSON.parse(text));
  return { provider, ...parsed } as CloudCredential;
}
