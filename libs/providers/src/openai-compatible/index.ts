import type { ProviderAdapter } from "../types";
import { openAiEmbeddings } from "./embeddings";
import { GENERIC_PROFILE, OPENAI_PROFILES } from "./profiles";
import { buildOpenAiNativeRequest, buildOpenAiRequest } from "./request";
import { parseOpenAiCompletion, parseOpenAiError } from "./response";
import { createOpenAiStreamDecoder } from "./stream";

/** The adapter for one OpenAI-compatible provider, shaped by its profile. */
export function openAiCompatibleAdapter(providerSlug: string): ProviderAdapter {
  const profile = OPENAI_PROFILES[providerSlug] ?? GENERIC_PROFILE;
  return {
    family: "openai",
    buildRequest: (req, target, stream) => buildOpenAiRequest(req, target, stream, profile),
    buildNativeRequest: (native, req, target, stream) => buildOpenAiNativeRequest(native, req, target, stream, profile),
    parseCompletion: parseOpenAiCompletion,
    createStreamDecoder: createOpenAiStreamDecoder,
    parseError: parseOpenAiError,
    embeddings: openAiEmbeddings(profile),
  };
}
