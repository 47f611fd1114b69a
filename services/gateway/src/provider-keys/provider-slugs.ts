/**
 * Providers the gateway has an adapter for: the only slugs a provider credential may name. The
 * provider adapter registry (src/providers/) and the credential routes both read this one list.
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
  // The clouds: their credentials are documents (cloud-credentials.ts), not keys.
  "azure",
  "bedrock",
  "vertex",
] as const;

export type ProviderSlug = (typeof PROVIDER_SLUGS)[number];

export function isProviderSlug(value: string): value is ProviderSlug {
  return (PROVIDER_SLUGS as readonly string[]).includes(value);
}
