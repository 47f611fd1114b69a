import type { ProviderAdapter } from "../types";
import { geminiEmbeddings } from "./embeddings";
import { buildGeminiRequest } from "./request";
import { parseGeminiCompletion, parseGeminiError } from "./response";
import { createGeminiStreamDecoder } from "./stream";

export const googleAdapter: ProviderAdapter = {
  family: "google",
  buildRequest: buildGeminiRequest,
  parseCompletion: parseGeminiCompletion,
  createStreamDecoder: createGeminiStreamDecoder,
  parseError: parseGeminiError,
  embeddings: geminiEmbeddings,
};
