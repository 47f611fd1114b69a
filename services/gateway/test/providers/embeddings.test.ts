import { fakeEmbedding, float32Base64, openAiWire, geminiWire, type RecordedRequest } from "@router/testkit";
import { adapterFor } from "@router/providers";
import { ProviderBodyError, type EmbeddingsAdapter, type UpstreamHttpRequest } from "@router/providers";
import { bodyOf, target, thrown } from "./wire-samples";

const openai = adapterFor("openai", "openai")!.embeddings!;
const mistral = adapterFor("openai", "mistral")!.embeddings!;
const gemini = adapterFor("google", "google")!.embeddings!;
const geminiTarget = target({ providerSlug: "google", baseUrl: "https://generativelanguage.googleapis.com/v1beta", upstreamModel: "gemini-embedding-001" });

/** What the testkit's fake of the provider answers to the request: the real wire shapes both ways. */
function fakeAnswer(wire: typeof openAiWire, req: UpstreamHttpRequest): unknown {
  const recorded: RecordedRequest = {
    method: "POST",
    path: req.url.pathname,
    query: Object.fromEntries(req.url.searchParams),
    headers: req.headers,
    body: JSON.parse(req.body),
    receivedAt: 0,
    clientClosed: false,
  };
  expect(wire.route("POST", recorded.path, recorded.query, recorded.body)).not.toBeNull();
  expect(wire.reject?.(recorded) ?? null).toBeNull();
  return wire.json({}, recorded, "m");
}

const roundTrip = (adapter: EmbeddingsAdapter, wire: typeof openAiWire, req: UpstreamHttpRequest, inputs: number) =>
  adapter.parse(fakeAnswer(wire, req), inputs);

describe("OpenAI-compatible embeddings", () => {
  it("posts model, input, encoding, dimensions and user to {base}/embeddings with the bearer key", () => {
    const req = openai.buildRequest({ input: ["a", "b"], dimensions: 256, encodingFormat: "base64", user: "u-1" }, target({ upstreamModel: "text-embedding-3-small" }));
    expect(req.url.toString()).toBe("https://api.example.test/v1/embeddings");
    expect(req.headers.authorization).toBe("Bearer sk-test-123");
    expect(bodyOf(req)).toEqual({ model: "text-embedding-3-small", input: ["a", "b"], encoding_format: "base64", dimensions: 256, user: "u-1" });
  });

  it("leaves user off where the provider refuses it", () => {
    expect(bodyOf(mistral.buildRequest({ input: ["a"], encodingFormat: "float", user: "u-1" }, target()))).toEqual({ model: "model-upstream", input: ["a"], encoding_format: "float" });
  });

  it("reads floats and base64 vectors in input order, with the prompt tokens", () => {
    const floats = roundTrip(openai, openAiWire, openai.buildRequest({ input: ["one two", "three"], encodingFormat: "float" }, target()), 2);
    expect(floats).toEqual({ vectors: [fakeEmbedding("one two"), fakeEmbedding("three")], promptTokens: 3 });
    const b64 = roundTrip(openai, openAiWire, openai.buildRequest({ input: ["x"], dimensions: 4, encodingFormat: "base64" }, target()), 1);
    expect(b64.vectors).toEqual([float32Base64(fakeEmbedding("x", 4))]);

    const shuffled = openai.parse({ data: [{ index: 1, embedding: [2] }, { index: 0, embedding: [1] }], usage: { prompt_tokens: 2 } }, 2);
    expect(shuffled.vectors).toEqual([[1], [2]]);
  });

  it("refuses an answer that does not embed every input, and reads an error in a 2xx body", () => {
    expect(thrown(() => openai.parse({ data: [{ index: 0, embedding: [1] }] }, 2))).toBeInstanceOf(Error);
    expect(thrown(() => openai.parse({ data: [{ index: 0, embedding: "x" }, { index: 0, embedding: "y" }] }, 2))).toBeInstanceOf(Error);
    expect(thrown(() => openai.parse({ data: [{ index: 0, embedding: ["a"] }] }, 1))).toBeInstanceOf(Error);
    const err = thrown(() => openai.parse({ error: { message: "bad", code: "invalid_request" } }, 1));
    expect(err).toBeInstanceOf(ProviderBodyError);
  });
});

describe("Gemini embeddings", () => {
  it("calls batchEmbedContents with one request per text, outputDimensionality and the key header", () => {
    const req = gemini.buildRequest({ input: ["a", "b"], dimensions: 768, encodingFormat: "base64", user: "u-1" }, geminiTarget);
    expect(req.url.toString()).toBe("https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents");
    expect(req.headers["x-goog-api-key"]).toBe("sk-test-123");
    expect(bodyOf(req)).toEqual({
      requests: [
        { model: "models/gemini-embedding-001", content: { parts: [{ text: "a" }] }, outputDimensionality: 768 },
        { model: "models/gemini-embedding-001", content: { parts: [{ text: "b" }] }, outputDimensionality: 768 },
      ],
    });
    // A base URL without a version segment gets v1beta, as for generateContent.
    expect(gemini.buildRequest({ input: ["a"], encodingFormat: "float" }, { ...geminiTarget, baseUrl: "http://127.0.0.1:9/" }).url.toString()).toBe(
      "http://127.0.0.1:9/v1beta/models/gemini-embedding-001:batchEmbedContents",
    );
  });

  it("reads the floats in input order; Gemini reports no tokens", () => {
    const got = roundTrip(gemini, geminiWire, gemini.buildRequest({ input: ["p", "q"], dimensions: 3, encodingFormat: "float" }, geminiTarget), 2);
    expect(got).toEqual({ vectors: [fakeEmbedding("p", 3), fakeEmbedding("q", 3)], promptTokens: null });
    expect(thrown(() => gemini.parse({ embeddings: [{ values: [1] }] }, 2))).toBeInstanceOf(Error);
    expect(thrown(() => gemini.parse({ error: { code: 400, message: "bad", status: "INVALID_ARGUMENT" } }, 1))).toBeInstanceOf(ProviderBodyError);
  });
});

describe("Anthropic", () => {
  it("has no embeddings API", () => {
    expect(adapterFor("anthropic", "anthropic")!.embeddings).toBeUndefined();
  });
});
