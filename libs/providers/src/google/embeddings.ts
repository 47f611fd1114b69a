import { asArray, asRecord, ProviderBodyError, type Embeddings, type EmbeddingsAdapter } from "../types";
import { geminiApiRoot } from "./request";
import { parseGeminiError } from "./response";

/**
 * `POST {root}/models/{model}:batchEmbedContents`, the Gemini API's embeddings: one request per
 * input text in `requests`, `outputDimensionality` for `dimensions`. The answer is floats only
 * (`{embeddings: [{values}]}`, in input order) and carries no token count; `user` has no field.
 */
export const geminiEmbeddings: EmbeddingsAdapter = {
  buildRequest(req, target) {
    const model = `models/${target.upstreamModel}`;
    const requests = req.input.map((text) => ({
      model,
      content: { parts: [{ text }] },
      ...(req.dimensions !== undefined ? { outputDimensionality: req.dimensions } : {}),
    }));
    return {
      url: new URL(`${geminiApiRoot(target.baseUrl)}/models/${encodeURIComponent(target.upstreamModel)}:batchEmbedContents`),
      headers: { "x-goog-api-key": target.apiKey, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ requests }),
    };
  },
  parse: parseGeminiEmbeddings,
};

export function parseGeminiEmbeddings(body: unknown, inputs: number): Embeddings {
  const b = asRecord(body);
  if (b && asRecord(b.error)) throw new ProviderBodyError(parseGeminiError(JSON.stringify(b)));
  const vectors = asArray(b?.embeddings).map((raw) => {
    const values = asRecord(raw)?.values;
    if (!Array.isArray(values) || !values.every((x) => typeof x === "number")) throw new Error("not an embeddings list");
    return values;
  });
  if (vectors.length !== inputs) throw new Error(`${vectors.length} embeddings for ${inputs} inputs`);
  return { vectors, promptTokens: null };
}
