import { asArray, asNumber, asRecord, ProviderBodyError, UnsupportedRequest, type Embeddings, type EmbeddingsAdapter } from "../types";
import { parseVertexError } from "./errors";
import { vertexModelUrl } from "./urls";

/** Vertex AI's Gemini embedding model takes one text a request (text-embedding-005 takes up to 250). */
const ONE_TEXT_A_REQUEST = /^gemini-embedding/;

/**
 * `POST …/publishers/google/models/{model}:predict`, Vertex AI's text embeddings:
 * `{instances: [{content}], parameters: {outputDimensionality}}`, answered with
 * `{predictions: [{embeddings: {values, statistics: {token_count}}}]}` in input order. Floats only;
 * `user` has no field.
 */
export const vertexEmbeddings: EmbeddingsAdapter = {
  buildRequest(req, target) {
    if (req.input.length > 1 && ONE_TEXT_A_REQUEST.test(target.upstreamModel)) {
      throw new UnsupportedRequest("input", `${target.upstreamModel} on Vertex AI embeds one text a request`);
    }
    const body = {
      instances: req.input.map((content) => ({ content })),
      ...(req.dimensions !== undefined ? { parameters: { outputDimensionality: req.dimensions } } : {}),
    };
    return {
      url: vertexModelUrl(target, "google", "predict"),
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
    };
  },
  parse: parseVertexEmbeddings,
};

export function parseVertexEmbeddings(body: unknown, inputs: number): Embeddings {
  const b = asRecord(body);
  if (b && asRecord(b.error)) throw new ProviderBodyError(parseVertexError(JSON.stringify(b)));
  let tokens = 0;
  const vectors = asArray(b?.predictions).map((raw) => {
    const embeddings = asRecord(asRecord(raw)?.embeddings);
    const values = embeddings?.values;
    if (!Array.isArray(values) || !values.every((x) => typeof x === "number")) throw new Error("not an embeddings list");
    tokens += asNumber(asRecord(embeddings?.statistics)?.token_count);
    return values;
  });
  if (vectors.length !== inputs) throw new Error(`${vectors.length} embeddings for ${inputs} inputs`);
  return { vectors, promptTokens: tokens };
}
