import type { FakeReply } from "./script";

/** Vector length when the request names no `dimensions` and the reply no `embeddingDimensions`. */
export const DEFAULT_EMBEDDING_DIMENSIONS = 8;

/**
 * The fake's embedding of one text: deterministic, so a test can compute what it should get back.
 * Each value is a multiple of 1/1024 in [-0.5, 0.5), exact in float32, so a base64 round trip is lossless.
 */
export function fakeEmbedding(text: string, dimensions = DEFAULT_EMBEDDING_DIMENSIONS): number[] {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return Array.from({ length: dimensions }, (_, j) => (((h >>> (j % 24)) + j * 97) % 1024) / 1024 - 0.5);
}

/** OpenAI's `encoding_format: "base64"`: the little-endian float32s of the vector. */
export function float32Base64(v: number[]): string {
  const buf = Buffer.alloc(v.length * 4);
  v.forEach((x, i) => buf.writeFloatLE(x, i * 4));
  return buf.toString("base64");
}

/** The texts of an embeddings request body, as OpenAI takes them: one string or a list. */
export function embeddingInputs(input: unknown): string[] {
  if (typeof input === "string") return [input];
  return Array.isArray(input) ? input.map((x) => (typeof x === "string" ? x : JSON.stringify(x))) : [];
}

/** Tokens the fake reports for texts: its scripted prompt count, else one a word. */
export function fakeEmbeddingTokens(reply: FakeReply, texts: string[]): number {
  return reply.usage?.prompt ?? texts.reduce((n, t) => n + (t.match(/\S+/g)?.length ?? 0), 0);
}

export function embeddingDimensions(reply: FakeReply, requested: unknown): number {
  return typeof requested === "number" ? requested : (reply.embeddingDimensions ?? DEFAULT_EMBEDDING_DIMENSIONS);
}
