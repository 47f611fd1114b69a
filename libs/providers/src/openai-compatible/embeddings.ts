import { asArray, asNumber, asRecord, asString, ProviderBodyError, type Embeddings, type EmbeddingsAdapter, type EmbeddingVector } from "../types";
import type { OpenAiProfile } from "./profiles";
import { parseOpenAiError } from "./response";

/**
 * `POST {base}/embeddings`, the OpenAI embeddings API that OpenAI-compatible servers share:
 * `{model, input, encoding_format, dimensions, user}` in, `{data: [{index, embedding}], usage}` out.
 * The client's encoding is asked for, so a base64 answer passes through without being decoded.
 */
export function openAiEmbeddings(profile: OpenAiProfile): EmbeddingsAdapter {
  return {
    buildRequest(req, target) {
      const body: Record<string, unknown> = { model: target.upstreamModel, input: req.input, encoding_format: req.encodingFormat };
      if (req.dimensions !== undefined) body.dimensions = req.dimensions;
      if (req.user !== undefined && profile.user) body.user = req.user;
      return {
        url: new URL(`${target.baseUrl.replace(/\/+$/, "")}/embeddings`),
        headers: { authorization: `Bearer ${target.apiKey}`, "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify(body),
      };
    },
    parse: parseOpenAiEmbeddings,
  };
}

export function parseOpenAiEmbeddings(body: unknown, inputs: number): Embeddings {
  const b = asRecord(body);
  if (b && asRecord(b.error)) throw new ProviderBodyError(parseOpenAiError(JSON.stringify(b)));
  const vectors: EmbeddingVector[] = new Array<EmbeddingVector>(inputs);
  let found = 0;
  asArray(b?.data).forEach((raw, i) => {
    const d = asRecord(raw);
    const index = typeof d?.index === "number" ? d.index : i;
    const v = d?.embedding;
    const vector = asString(v) ?? (Array.isArray(v) && v.every((x) => typeof x === "number") ? v : null);
    if (vector === null || index < 0 || index >= inputs || vectors[index] !== undefined) throw new Error("not an embeddings list");
    vectors[index] = vector;
    found++;
  });
  if (found !== inputs) throw new Error(`${found} embeddings for ${inputs} inputs`);
  const usage = asRecord(b?.usage);
  return { vectors, promptTokens: usage ? asNumber(usage.prompt_tokens) : null };
}
