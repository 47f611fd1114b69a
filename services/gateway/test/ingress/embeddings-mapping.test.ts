import { DomainError } from "@router/errors";
import { fakeEmbedding, float32Base64 } from "@router/testkit";
import type { ChatContext } from "../../src/chat/chat-context";
import type { Candidate } from "../../src/dispatch/types";
import { embeddingsIngress, toBase64, toFloats } from "../../src/ingress/embeddings";
import { inputTexts, parseEmbeddingsRequest } from "../../../../libs/inference-api/src/embeddings/request";
import { openAiError } from "../../src/ingress/openai-error";

const refusal = (f: () => unknown): { field: unknown; message: string } | null => {
  try {
    f();
  } catch (e) {
    if (e instanceof DomainError) return { field: e.details?.field, message: e.message };
    throw e;
  }
  return null;
};

describe("the embeddings request mapping", () => {
  it("maps one text or a batch to one user message each, with the options and the router's fields", () => {
    const one = parseEmbeddingsRequest({ model: "openai/text-embedding-3-small", input: "hello" });
    expect(one.request).toEqual({ model: "openai/text-embedding-3-small", messages: [{ role: "user", content: "hello" }] });
    expect(one.options).toEqual({ encodingFormat: "float" });

    const batch = parseEmbeddingsRequest({
      model: "openai/text-embedding-3-small",
      models: ["google/gemini-embedding-001"],
      input: ["a", "b"],
      dimensions: 256,
      encoding_format: "base64",
      user: "u-7",
      provider: { order: ["openai"] },
      unknown_field: 1,
    });
    expect(batch.request).toEqual({
      model: "openai/text-embedding-3-small",
      models: ["google/gemini-embedding-001"],
      messages: [
        { role: "user", content: "a" },
        { role: "user", content: "b" },
      ],
      user: "u-7",
      provider: { order: ["openai"] },
    });
    expect(batch.options).toEqual({ encodingFormat: "base64", dimensions: 256, user: "u-7" });
    expect(inputTexts(batch.request)).toEqual(["a", "b"]);
  });

  it("refuses bad input with a 400 naming the field", () => {
    expect(refusal(() => parseEmbeddingsRequest([]))?.field).toBe("body");
    expect(refusal(() => parseEmbeddingsRequest({ model: "m" }))?.field).toBe("input");
    expect(refusal(() => parseEmbeddingsRequest({ model: "m", input: "" }))?.field).toBe("input");
    expect(refusal(() => parseEmbeddingsRequest({ model: "m", input: [] }))?.field).toBe("input");
    expect(refusal(() => parseEmbeddingsRequest({ model: "m", input: ["ok", 3] }))?.field).toMatch(/^input/);
    expect(refusal(() => parseEmbeddingsRequest({ model: "m", input: "x", dimensions: 0 }))?.field).toBe("dimensions");
    expect(refusal(() => parseEmbeddingsRequest({ model: "m", input: "x", encoding_format: "int8" }))?.field).toBe("encoding_format");
    expect(refusal(() => parseEmbeddingsRequest({ model: "m", input: Array.from({ length: 2049 }, () => "x") }))?.field).toBe("input");
    const tokens = refusal(() => parseEmbeddingsRequest({ model: "m", input: [[1, 2, 3]] }));
    expect(tokens).toMatchObject({ field: "input" });
    expect(tokens?.message).toContain("token arrays are not taken");
    expect(refusal(() => parseEmbeddingsRequest({ model: "m", input: [1, 2, 3] }))?.field).toBe("input");
  });

  it("errors in the OpenAI envelope with param naming the field", () => {
    expect(embeddingsIngress.errorBody({ status: 400, code: "invalid_request", message: "input: bad", details: { field: "input" } })).toEqual(
      openAiError({ status: 400, code: "invalid_request", message: "input: bad", details: { field: "input" } }),
    );
    expect(embeddingsIngress.errorBody({ status: 400, code: "invalid_request", message: "input: bad", details: { field: "input" } })).toMatchObject({
      error: { type: "invalid_request_error", param: "input", code: "invalid_request" },
    });
  });
});

describe("the embeddings answer", () => {
  const ctx = { id: "gen-abc", created: 1 } as ChatContext;
  const candidate = { modelId: "openai/text-embedding-3-small", providerSlug: "openai" } as Candidate;
  const usage = { prompt: 5, completion: 0, cached: 0, reasoning: 0 };

  it("is the OpenAI list: one embedding per input, the generation id, prompt tokens as the total", () => {
    const v = fakeEmbedding("x", 4);
    const body = embeddingsIngress.render(ctx, { candidate, embeddings: { vectors: [v, float32Base64(v)], promptTokens: 5 }, usage, encodingFormat: "float", meta: null });
    expect(body).toEqual({
      id: "gen-abc",
      object: "list",
      data: [
        { object: "embedding", index: 0, embedding: v },
        { object: "embedding", index: 1, embedding: v },
      ],
      model: "openai/text-embedding-3-small",
      provider: "openai",
      usage: { prompt_tokens: 5, total_tokens: 5 },
    });
  });

  it("encodes floats as base64 of little-endian float32s, and passes a provider's base64 through", () => {
    const v = [0.5, -0.25, 1 / 1024];
    expect(toBase64(v)).toBe(float32Base64(v));
    expect(toFloats(toBase64(v))).toEqual(v);
    expect(toBase64("AAAAPw==")).toBe("AAAAPw==");
    const body = embeddingsIngress.render(ctx, { candidate, embeddings: { vectors: [v], promptTokens: null }, usage, encodingFormat: "base64", meta: { generation_id: "gen-abc" } });
    expect(body.data).toEqual([{ object: "embedding", index: 0, embedding: float32Base64(v) }]);
    expect(body.router_metadata).toEqual({ generation_id: "gen-abc" });
  });
});
