import type { ChatContext } from "../../chat/chat-context";
import type { EmbeddingVector } from "@router/providers";
import type { EmbeddingsAnswer, EmbeddingsIngress } from "../ingress";
import { openAiError } from "../openai-error";
import { parseEmbeddingsRequest } from "@router/inference-api";

export const EMBEDDINGS_PATH = "/v1/embeddings";

/** OpenAI's base64 encoding: the vector's little-endian float32s. */
export function toBase64(v: EmbeddingVector): string {
  if (typeof v === "string") return v;
  const buf = Buffer.allocUnsafe(v.length * 4);
  v.forEach((x, i) => buf.writeFloatLE(x, i * 4));
  return buf.toString("base64");
}

export function toFloats(v: EmbeddingVector): number[] {
  if (typeof v !== "string") return v;
  const buf = Buffer.from(v, "base64");
  const out = new Array<number>(buf.length >> 2);
  for (let i = 0; i < out.length; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}

/**
 * `POST /v1/embeddings`: OpenAI embeddings in and out, served by any provider with an embeddings API
 * (docs/ingress.md). Whole answers only; the list's `id` is the generation id.
 */
export const embeddingsIngress: EmbeddingsIngress = {
  kind: "embeddings",
  name: "embeddings",
  path: EMBEDDINGS_PATH,
  parse: parseEmbeddingsRequest,
  render(ctx: ChatContext, a: EmbeddingsAnswer): Record<string, unknown> {
    const encode = a.encodingFormat === "base64" ? toBase64 : toFloats;
    const body: Record<string, unknown> = {
      id: ctx.id,
      object: "list",
      data: a.embeddings.vectors.map((v, index) => ({ object: "embedding", index, embedding: encode(v) })),
      model: a.candidate.modelId,
      provider: a.candidate.providerSlug,
      usage: { prompt_tokens: a.usage.prompt, total_tokens: a.usage.prompt },
    };
    if (a.meta) body.router_metadata = a.meta;
    return body;
  },
  errorBody: openAiError,
};
