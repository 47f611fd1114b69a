/**
 * What each OpenAI-compatible provider accepts beyond the common core. A field a provider would
 * refuse (a 400 or 422 for an unknown argument) is dropped or mapped for it, deliberately, rather
 * than failing the request; a value it cannot take at all (too many stop sequences) is refused
 * before sending, so the dispatcher tries the next endpoint.
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
  /**
   * Accepts `stream_options: {include_usage: true}`, without which it reports no usage on a
   * stream. False for providers that refuse the field and report stream usage unasked.
   */
  streamOptions: boolean;
  /** Accepts the `developer` role; otherwise developer messages are sent as `system`. */
  developerRole: boolean;
  /** Which messages may carry `name`: every role, or only tool results. */
  messageNames: "all" | "tool";
  /** The most stop sequences it takes, or null when no limit is known. */
  maxStopSequences: number | null;
  /** Reads `file` content parts (a PDF inline, or a file id of its own Files API). */
  fileParts: boolean;
  /** Reads `input_audio` content parts. */
  audioParts: boolean;
  /**
   * Which fields Router does not model it is sent from a client's chat completions body
   * (`service_tier`, `verbosity`, `metadata`, fields newer than Router, ...), as written: `true`
   * every one (servers that ignore what they do not know), a set the ones its API takes (OpenAI
   * refuses any other with a 400), `false` none (Mistral refuses unknown fields; it gets a translation).
   */
  passesUnknownFields: boolean | ReadonlySet<string>;
}

const BASE: OpenAiProfile = {
  topK: false,
  seedField: "seed",
  reasoningEffort: false,
  maxTokensField: "max_tokens",
  user: true,
  promptCacheKey: false,
  streamOptions: true,
  developerRole: false,
  messageNames: "all",
  maxStopSequences: null,
  fileParts: false,
  audioParts: false,
  passesUnknownFields: true,
};

/**
 * The chat completions fields OpenAI's API reference lists beyond what Router models; OpenAI refuses
 * any other ("Unrecognized request argument supplied"), such as another gateway's own fields.
 */
const OPENAI_CHAT_FIELDS: ReadonlySet<string> = new Set([
  "audio",
  "function_call",
  "functions",
  "logit_bias",
  "logprobs",
  "metadata",
  "modalities",
  "prediction",
  "prompt_cache_retention",
  "reasoning_effort",
  "safety_identifier",
  "service_tier",
  "store",
  "top_logprobs",
  "verbosity",
  "web_search_options",
]);

export const OPENAI_PROFILES: Record<string, OpenAiProfile> = {
  // OpenAI deprecated max_tokens; reasoning models refuse it.
  openai: {
    ...BASE,
    reasoningEffort: true,
    maxTokensField: "max_completion_tokens",
    promptCacheKey: true,
    developerRole: true,
    maxStopSequences: 4,
    fileParts: true,
    audioParts: true,
    passesUnknownFields: OPENAI_CHAT_FIELDS,
  },
  // Mistral's API forbids unknown fields (422 extra_forbidden), stream_options included, and puts
  // usage on the last chunk of every stream; its system, user and assistant messages have no name.
  mistral: { ...BASE, seedField: "random_seed", user: false, streamOptions: false, messageNames: "tool", passesUnknownFields: false },
  groq: { ...BASE, reasoningEffort: true, maxStopSequences: 4 },
  deepseek: { ...BASE, seedField: null, maxStopSequences: 16 },
  xai: { ...BASE, reasoningEffort: true, maxStopSequences: 4 },
  together: { ...BASE, topK: true },
  fireworks: { ...BASE, topK: true, reasoningEffort: true },
  // vLLM serves audio-input models with OpenAI's input_audio parts.
  vllm: { ...BASE, topK: true, audioParts: true },
  ollama: { ...BASE, topK: true },
};

/** For a self-hosted or unlisted OpenAI-compatible server: the portable core only. */
export const GENERIC_PROFILE: OpenAiProfile = BASE;
