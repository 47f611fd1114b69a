export * from "./script";
export { startFakeOpenAi, openAiWire } from "./openai";
export { startFakeAnthropic, anthropicWire, fakeThinkingSignature, fakeTokenCount } from "./anthropic";
export { startFakeGemini, geminiWire } from "./google";
export { startFakeAzureOpenAi, azureWire, type FakeAzureOptions } from "./azure";
export { startFakeEntra, type FakeEntra } from "./entra";
export { startFakeVertex, testServiceAccount, GOOGLE_TOKEN_AUDIENCE, type FakeVertex, type FakeVertexOptions, type ServiceAccountKey, type TestServiceAccount } from "./vertex";
export { startFakeProvider, type Frame, type ProviderWire, type RouteMatch } from "./server";
export { fakeEmbedding, float32Base64, DEFAULT_EMBEDDING_DIMENSIONS } from "./embeddings";
