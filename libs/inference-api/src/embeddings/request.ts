import { z } from "zod";
import { invalid } from "@router/errors";
import { parseInput } from "@router/http-kit";
import type { ChatRequest } from "@router/chat-request";
import type { ParsedEmbeddings } from "../parsed";
import { routerFields, routerFieldValues } from "../router-fields";

/**
 * The body of `POST /v1/embeddings` (OpenAI embeddings), validated and mapped to the internal
 * request: each text one user message, so routing, the worst-case reservation and the guardrails'
 * content filters see it as they see a chat request's messages. Token arrays are refused: tokens
 * are one model's own, and Router may route the request to another model or provider. Unknown
 * top-level fields are dropped, as on the chat route.
 */

/** OpenAI takes at most 2048 inputs in one request. */
export const MAX_INPUTS = 2048;

const text = z.string().min(1, { message: "expected a non-empty string" });

export const embeddingsBodySchema = z.object({
  model: z.string().min(1).max(256).optional(),
  input: z.union([text, z.array(text).min(1).max(MAX_INPUTS)], { error: `expected a non-empty string or an array of 1 to ${MAX_INPUTS} non-empty strings` }),
  dimensions: z.number().int().positive().max(65_536).optional(),
  encoding_format: z.enum(["float", "base64"]).optional(),
  user: z.string().max(256).optional(),
  ...routerFields,
});

export type EmbeddingsBody = z.infer<typeof embeddingsBodySchema>;

/** A token array (`[1, 2]`) or a list of them (`[[1, 2]]`). */
function isTokens(input: unknown): boolean {
  return Array.isArray(input) && input.length > 0 && input.every((x) => typeof x === "number" || Array.isArray(x));
}

/** Validates an embeddings body (a 400 naming the field) and maps it to the internal request. */
export function parseEmbeddingsRequest(body: unknown): ParsedEmbeddings {
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw invalid("body", "expected a JSON object");
  if (isTokens((body as { input?: unknown }).input)) {
    throw invalid("input", "token arrays are not taken: send the text (Router may route to another model or provider, whose tokens differ)");
  }
  const b = parseInput(embeddingsBodySchema, body);
  const texts = typeof b.input === "string" ? [b.input] : b.input;
  const request: ChatRequest = {
    model: b.model,
    messages: texts.map((content) => ({ role: "user", content })),
    user: b.user,
    ...routerFieldValues(b),
  };
  for (const k of Object.keys(request) as (keyof ChatRequest)[]) if (request[k] === undefined) delete request[k];
  const options: ParsedEmbeddings["options"] = { encodingFormat: b.encoding_format ?? "float" };
  if (b.dimensions !== undefined) options.dimensions = b.dimensions;
  if (b.user !== undefined) options.user = b.user;
  return { request, options };
}

/** The texts as they go upstream: the messages after any redacting content filter, in order. */
export function inputTexts(request: ChatRequest): string[] {
  return request.messages.map((m) => (typeof m.content === "string" ? m.content : ""));
}
