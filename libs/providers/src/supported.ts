import { PROVIDER_SLUGS, type ProviderSlug } from "./provider-slugs";
import type { ApiFamily } from "./types";

/** Provider slugs that have an adapter: the only providers a credential may name. */
export const SUPPORTED_PROVIDERS: readonly ProviderSlug[] = PROVIDER_SLUGS;

/** The wire family of each supported provider; the compiler insists every slug has one. */
export const PROVIDER_FAMILY: Record<ProviderSlug, ApiFamily> = {
  openai: "openai",
  anthropic: "anthropic",
  google: "google",
  mistral: "openai",
  groq: "openai",
  deepseek: "openai",
  xai: "openai",
  together: "openai",
  fireworks: "openai",
  vllm: "openai",
  ollama: "openai",
  azure: "openai",
  bedrock: "bedrock",
  vertex: "google",
};
