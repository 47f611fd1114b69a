import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { embeddingsBodySchema, messagesBodySchema, responsesBodySchema } from "@router/inference-api";
import { jsonBody, pathParams, SECURITY } from "./envelopes";

/** The other ways in beside chat completions: OpenAI Responses, Anthropic Messages and OpenAI embeddings (docs/ingress.md). */
export function registerIngressPaths(registry: OpenAPIRegistry): void {
  const openAiError = z
    .looseObject({ error: z.looseObject({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string() }) })
    .meta({ id: "OpenAiError" });
  const response = z
    .looseObject({
      id: z.string(),
      object: z.literal("response"),
      created_at: z.number().int(),
      status: z.enum(["completed", "incomplete", "failed", "in_progress"]),
      model: z.string(),
      output: z.array(z.looseObject({ type: z.string() })),
      usage: z.looseObject({ input_tokens: z.number().int(), output_tokens: z.number().int(), total_tokens: z.number().int() }).nullable(),
    })
    .meta({ id: "Response" });
  registry.registerPath({
    method: "post",
    path: "/v1/responses",
    summary:
      "OpenAI Responses, served by any provider; kept for `previous_response_id` and `item_reference` unless `store` is false; the Responses event stream when `stream` is true",
    security: SECURITY.inference,
    request: { body: jsonBody(responsesBodySchema.meta({ id: "ResponsesRequest" })) },
    responses: {
      200: {
        description: "The response, or its event stream (response.created ... response.completed)",
        content: { "application/json": { schema: response }, "text/event-stream": { schema: z.string() } },
      },
      ...errors([400, 401, 402, 403, 404, 429], openAiError),
    },
  });
  registry.registerPath({
    method: "get",
    path: "/v1/responses/{id}",
    summary: "A stored response of the caller's organisation (kept while `store` was true, until its retention ends)",
    security: SECURITY.inference,
    request: { params: pathParams("id") },
    responses: { 200: { description: "The response", content: { "application/json": { schema: response } } }, ...errors([401, 403, 404], openAiError) },
  });
  registry.registerPath({
    method: "get",
    path: "/v1/responses/{id}/input_items",
    summary: "The input items a stored response was given (previous_response_id and item_reference expanded), newest first unless order=asc",
    security: SECURITY.inference,
    request: { params: pathParams("id"), query: z.object({ order: z.enum(["asc", "desc"]).optional() }) },
    responses: {
      200: {
        description: "A list of input items",
        content: {
          "application/json": {
            schema: z.looseObject({ object: z.literal("list"), data: z.array(z.looseObject({ type: z.string() })), has_more: z.boolean() }),
          },
        },
      },
      ...errors([401, 403, 404], openAiError),
    },
  });
  registry.registerPath({
    method: "delete",
    path: "/v1/responses/{id}",
    summary: "Delete a stored response of the caller's organisation",
    security: SECURITY.inference,
    request: { params: pathParams("id") },
    responses: {
      200: {
        description: "Deleted",
        content: { "application/json": { schema: z.object({ id: z.string(), object: z.literal("response"), deleted: z.literal(true) }) } },
      },
      ...errors([401, 403, 404], openAiError),
    },
  });

  const embeddings = z
    .looseObject({
      id: z.string(),
      object: z.literal("list"),
      data: z.array(
        z.looseObject({
          object: z.literal("embedding"),
          index: z.number().int(),
          embedding: z.union([z.array(z.number()), z.string()]).meta({ description: "Floats, or base64 of little-endian float32s when encoding_format is base64" }),
        }),
      ),
      model: z.string(),
      provider: z.string(),
      usage: z.looseObject({ prompt_tokens: z.number().int(), total_tokens: z.number().int() }),
    })
    .meta({ id: "EmbeddingsList" });
  registry.registerPath({
    method: "post",
    path: "/v1/embeddings",
    summary: "OpenAI embeddings of one text or a batch, served by any provider with an embeddings API; embedding models only",
    security: SECURITY.inference,
    request: { body: jsonBody(embeddingsBodySchema.meta({ id: "EmbeddingsRequest" })) },
    responses: {
      200: { description: "One embedding per input, in input order", content: { "application/json": { schema: embeddings } } },
      ...errors([400, 401, 402, 403, 404, 429], openAiError),
    },
  });

  const anthropicError = z
    .looseObject({ type: z.literal("error"), error: z.looseObject({ type: z.string(), message: z.string() }) })
    .meta({ id: "AnthropicError" });
  const message = z
    .looseObject({
      id: z.string(),
      type: z.literal("message"),
      role: z.literal("assistant"),
      model: z.string(),
      content: z.array(z.looseObject({ type: z.string() })),
      stop_reason: z.string().nullable(),
      usage: z.looseObject({ input_tokens: z.number().int(), output_tokens: z.number().int() }),
    })
    .meta({ id: "AnthropicMessage" });
  registry.registerPath({
    method: "post",
    path: "/v1/messages",
    summary: "Anthropic Messages, served by any provider; the Messages event stream when `stream` is true",
    security: [...SECURITY.inference, { inferenceApiKey: [] }],
    request: {
      headers: z.object({
        "anthropic-version": z.string().optional().meta({ description: "Accepted; the answer has the 2023-06-01 shape" }),
        "anthropic-beta": z.string().optional().meta({ description: "Sent on to Anthropic endpoints (as X-Vendor-Beta)" }),
      }),
      body: jsonBody(messagesBodySchema.meta({ id: "MessagesRequest" })),
    },
    responses: {
      200: {
        description: "The message, or its event stream (message_start ... message_stop)",
        content: { "application/json": { schema: message }, "text/event-stream": { schema: z.string() } },
      },
      ...errors([400, 401, 402, 403, 404, 429], anthropicError),
    },
  });
  const tokenCountHeader = {
    "x-router-token-count": { description: "`provider` (the provider's own count) or `estimate` (a tokenizer's)", schema: { type: "string" as const } },
  };
  registry.registerPath({
    method: "post",
    path: "/v1/messages/count_tokens",
    summary: "Input tokens of a Messages body (no max_tokens): Anthropic's own count when Anthropic would serve the model, an estimate otherwise; nothing is billed",
    security: [...SECURITY.inference, { inferenceApiKey: [] }],
    request: { body: jsonBody(messagesBodySchema.omit({ max_tokens: true }).meta({ id: "MessagesCountTokensRequest" })) },
    responses: {
      200: {
        description: "The count",
        headers: tokenCountHeader,
        content: { "application/json": { schema: z.looseObject({ input_tokens: z.number().int(), estimate: z.boolean().optional() }) } },
      },
      ...errors([400, 401, 404, 429], anthropicError),
    },
  });
  registry.registerPath({
    method: "post",
    path: "/v1/responses/input_tokens",
    summary: "Input tokens of a Responses body, estimated with a tokenizer (no endpoint speaks the Responses API); nothing is billed",
    security: SECURITY.inference,
    request: { body: jsonBody(responsesBodySchema.meta({ id: "ResponsesInputTokensRequest" })) },
    responses: {
      200: {
        description: "The count",
        headers: tokenCountHeader,
        content: { "application/json": { schema: z.looseObject({ object: z.literal("response.input_tokens"), input_tokens: z.number().int() }) } },
      },
      ...errors([400, 401, 404, 429], openAiError),
    },
  });
}

function errors(statuses: number[], schema: z.ZodType): Record<number, { description: string; content: { "application/json": { schema: z.ZodType } } }> {
  return Object.fromEntries(statuses.map((s) => [s, { description: `Refused (${s}), in the format's own error shape`, content: { "application/json": { schema } } }]));
}
