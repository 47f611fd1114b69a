import { azureOpenAiAdapter } from "./azure";
import { bedrockAdapters } from "./bedrock";
import type { ApiFamily, ProviderAdapter } from "./types";
import { vertexClaudeAdapter, vertexGeminiAdapter } from "./vertex";

/**
 * The clouds' adapters, by provider slug and the endpoint's wire format: a cloud serves several
 * (Claude on Bedrock speaks Anthropic's Messages body, Llama on Bedrock the Converse API).
 */
export const CLOUD_ADAPTERS: Record<string, Partial<Record<ApiFamily, ProviderAdapter>>> = {
  azure: { openai: azureOpenAiAdapter },
  bedrock: bedrockAdapters,
  vertex: { google: vertexGeminiAdapter, anthropic: vertexClaudeAdapter },
};
