import type { ProviderAdapter } from "../types";
import { buildAnthropicRequest } from "./request";
import { parseAnthropicCompletion, parseAnthropicError } from "./response";
import { createAnthropicStreamDecoder } from "./stream";

export const anthropicAdapter: ProviderAdapter = {
  family: "anthropic",
  buildRequest: buildAnthropicRequest,
  parseCompletion: parseAnthropicCompletion,
  createStreamDecoder: createAnthropicStreamDecoder,
  parseError: parseAnthropicError,
};
