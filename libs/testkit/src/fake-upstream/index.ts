export * from "./script";
export { startFakeOpenAi, openAiWire } from "./openai";
export { startFakeAnthropic, anthropicWire, fakeThinkingSignature, fakeTokenCount } from "./anthropic";
export { startFakeGemini, geminiWire } from "./google";
export { startFakeAzureOpenAi, azureWire, type FakeAzureOptions } from "./azure";
export { startFakeProvider, type Frame, type ProviderWire, type RouteMatch } from "./server";
export { fakeEmbedding, float32Base64, DEFAULT_EMBEDDING_DIMENSIONS } from "./embeddings";
