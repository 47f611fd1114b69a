import { DomainError } from "@router/errors";
import { errorBody } from "@router/http-kit";
import type { Candidate } from "../../dispatch/types";
import { promptParts } from "../../spend/usage-cost";
import type { TokenUsage } from "@router/providers";

// The OpenAI-compatible shapes the chat route answers with.

export interface ChunkEnvelope {
  id: string;
  created: number;
}

/**
 * The fixed start of every chunk of a committed stream; only the choices are serialised per chunk.
 * Ends with `"choices":`, so a chunk is `prefix + JSON.stringify(choices) + "}"`.
 */
export function chunkPrefix(e: ChunkEnvelope, c: Candidate): string {
  return `{"id":"${e.id}","object":"chat.completion.chunk","created":${e.created},"model":${JSON.stringify(c.modelId)},"provider":${JSON.stringify(c.providerSlug)},"choices":`;
}

/** The last chunk of a stream that failed: the error, a finish reason of `error`, usage if known. */
export function errorChunk(
  e: ChunkEnvelope,
  model: string,
  provider: string | null,
  err: DomainError,
  usage: TokenUsage | null,
  meta: Record<string, unknown> | null,
): Record<string, unknown> {
  const chunk: Record<string, unknown> = {
    id: e.id,
    object: "chat.completion.chunk",
    created: e.created,
    model,
    ...(provider ? { provider } : {}),
    error: errorBody(err.status, err.code, err.message, err.details).error,
    choices: [{ index: 0, delta: {}, finish_reason: "error", native_finish_reason: null }],
  };
  if (usage) chunk.usage = usageBody(usage);
  if (meta) chunk.router_metadata = meta;
  return chunk;
}

export function usageBody(u: TokenUsage): Record<string, unknown> {
  const parts = promptParts(u);
  return {
    prompt_tokens: u.prompt,
    completion_tokens: u.completion,
    total_tokens: u.prompt + u.completion,
    // cache_write_tokens as OpenRouter reports it: clients that track cache spend read it there.
    prompt_tokens_details: { cached_tokens: parts.cacheRead, cache_write_tokens: parts.cacheWrite5m + parts.cacheWrite1h },
    completion_tokens_details: { reasoning_tokens: u.reasoning },
  };
}
