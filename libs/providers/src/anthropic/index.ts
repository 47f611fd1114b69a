import type { ProviderAdapter } from "../types";
import { buildAnthropicNativeRequest } from "./native-request";
import { buildAnthropicRequest } from "./request";
import { parseAnthropicCompletion, parseAnthropicError } from "./response";
import { createAnthropicStreamDecoder } from "./stream";

export const anthropicAdapter: ProviderAdapter = {
  family: "anthropic",
  buildRequest: buildAnthropicRequest,
  buildNativeRequest: buildAnthropicNativeRequest,
  parseCompletion: parseAnthropicCompletion,
  createStreamDecoder: createAnthropicStreamDecoder,
  parseError: parseAnthropicError,
};
