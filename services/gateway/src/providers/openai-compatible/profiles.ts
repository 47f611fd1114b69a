/**
 * What each OpenAI-compatible provider accepts beyond the common core. A field a provider would
 * refuse (a 400 or 422 for an unknown argument) is dropped for it, deliberately, rather than failing
 * the request.
 */
export interface OpenAiProfile {
  /** Accepts `top_k`. */
  topK: boolean;
  /** The provider's name for the sampling seed, or null when it has none. */
  seedField: "seed" | "random_seed" | null;
  /** Accepts `reasoning_effort` (low/medium/high). */
  reasoningEffort: boolean;
  /** Which field carries the completion budget. */
  maxTokensField: "max_tokens" | "max_completion_tokens";
  /** Accepts `user`. */
  user: boolean;
  /** Accepts `prompt_cache_key` (keeps requests that share a prefix on one cache). */
  promptCacheKey: boolean;
}

const BASE: OpenAiProfile = {
  topK: false,
  seedField: "seed",
  reasoningEffort: false,
  maxTokensField: "max_tokens",
  user: true,
  promptCacheKey: false,
};

export const OPENAI_PROFILES: Record<string, OpenAiProfile> = {
  // OpenAI deprecated max_tokens; reasoning models refuse it.
  openai: { ...BASE, reasoningEffort: true, maxTokensField: "max_completion_tokens", promptCacheKey: true },
  mistral: { ...BASE, seedField: "random_seed", user: false },
  groq: { ...BASE, reasoningEffort: true },
  deepseek: { ...BASE, seedField: null },
  xai: { ...BASE, reasoningEffort: true },
  together: { ...BASE, topK: true },
  fireworks: { ...BASE, topK: true, reasoningEffort: true },
  vllm: { ...BASE, topK: true },
  ollama: { ...BASE, topK: true },
};

/** For a self-hosted or unlisted OpenAI-compatible server: the portable core only. */
export const GENERIC_PROFILE: OpenAiProfile = BASE;
