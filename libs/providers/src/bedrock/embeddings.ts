import { asArray, asNumber, asRecord, UnsupportedRequest, type Embeddings, type EmbeddingsAdapter, type EmbeddingsRequest, type UpstreamTarget } from "../types";
import { bedrockModelUrl } from "./url";

/** Titan Text Embeddings v2 sizes its vectors to one of these; 1024 by default. */
const TITAN_DIMENSIONS = new Set([256, 512, 1024]);
/** Cohere Embed v3 on Bedrock takes at most this many texts a call. */
const COHERE_MAX_TEXTS = 96;

const isTitan = (model: string): boolean => /^(?:[a-z]{2,4}\.)?amazon\.titan-embed/.test(model);
const isCohere = (model: string): boolean => /^(?:[a-z]{2,4}\.)?cohere\.embed/.test(model);

function titanBody(req: EmbeddingsRequest, target: UpstreamTarget): Record<string, unknown> {
  // One text per InvokeModel call; a batch would be several upstream calls, each billed and able to
  // fail on its own, which the embeddings contract (one request, one answer) does not model.
  if (req.input.length !== 1) throw new UnsupportedRequest("input", `${target.upstreamModel} embeds one text per request; send the texts one by one`);
  if (req.dimensions !== undefined && !TITAN_DIMENSIONS.has(req.dimensions)) {
    throw new UnsupportedRequest("dimensions", `${target.upstreamModel} makes vectors of 256, 512 or 1024 dimensions`);
  }
  return { inputText: req.input[0], ...(req.dimensions !== undefined ? { dimensions: req.dimensions } : {}), normalize: true };
}

function cohereBody(req: EmbeddingsRequest, target: UpstreamTarget): Record<string, unknown> {
  if (req.dimensions !== undefined) throw new UnsupportedRequest("dimensions", `${target.upstreamModel} makes vectors of one size only`);
  if (req.input.length > COHERE_MAX_TEXTS) throw new UnsupportedRequest("input", `${target.upstreamModel} embeds at most ${COHERE_MAX_TEXTS} texts per request`);
  // The texts are stored for search (an OpenAI embeddings call says nothing of queries).
  return { texts: req.input, input_type: "search_document" };
}

/**
 * Embeddings through InvokeModel, in each model's own body: Titan Text Embeddings
 * (`{inputText, dimensions, normalize}` → `{embedding, inputTextTokenCount}`) and Cohere Embed
 * (`{texts, input_type}` → `{embeddings}`, no token count). Floats only; `user` has no field.
 */
export const bedrockEmbeddings: EmbeddingsAdapter = {
  buildRequest(req, target) {
    const model = target.upstreamModel;
    let body: Record<string, unknown>;
    if (isTitan(model)) body = titanBody(req, target);
    else if (isCohere(model)) body = cohereBody(req, target);
    else throw new UnsupportedRequest("model", `${model} is not an embeddings model Router knows on Bedrock`);
    return { url: bedrockModelUrl(target, "invoke"), headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify(body) };
  },
  parse(body: unknown, inputs: number): Embeddings {
    const b = asRecord(body);
    const floats = (v: unknown): number[] => {
      if (!Array.isArray(v) || !v.every((x) => typeof x === "number")) throw new Error("not an embedding");
      return v;
    };
    let vectors: number[][];
    let promptTokens: number | null = null;
    if (b && "embedding" in b) {
      vectors = [floats(b.embedding)];
      promptTokens = asNumber(b.inputTextTokenCount);
    } else {
      // Cohere answers `embeddings` as a list, or by type (`{float: [...]}`) when types were asked for.
      const list = Array.isArray(b?.embeddings) ? b.embeddings : asRecord(b?.embeddings)?.float;
      vectors = asArray(list).map(floats);
    }
    if (vectors.length !== inputs) throw new Error(`${vectors.length} embeddings for ${inputs} inputs`);
    return { vectors, promptTokens };
  },
};
