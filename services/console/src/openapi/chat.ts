import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { chatBodySchema } from "@router/chat-request";
import { previewBodySchema } from "@router/inference-api";
import { json, jsonBody, refusals, SECURITY } from "./envelopes";

/** The chat completion (served by Node ahead of express) and the MCP server. */
export function registerChatPaths(registry: OpenAPIRegistry): void {
  const completion = z
    .looseObject({
      id: z.string(),
      object: z.literal("chat.completion"),
      created: z.number().int(),
      model: z.string(),
      choices: z.array(z.looseObject({ index: z.number().int(), finish_reason: z.string().nullable() })),
      usage: z.looseObject({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() }),
    })
    .meta({ id: "ChatCompletion" });
  registry.registerPath({
    method: "post",
    path: "/v1/chat/completions",
    summary: "Chat completion (OpenAI-compatible), streamed as server-sent events when `stream` is true",
    // A dashboard session too (owner, admin, developer), charged to the signed-in person.
    security: [...SECURITY.inference, ...SECURITY.session],
    request: { body: jsonBody(chatBodySchema.meta({ id: "ChatRequest" })) },
    responses: {
      200: {
        description: "The completion, or an event stream of chunks ending with `data: [DONE]`",
        content: { "application/json": { schema: completion }, "text/event-stream": { schema: z.string() } },
      },
      ...refusals(400, 401, 402, 403, 404, 429),
    },
  });

  registry.registerPath({
    method: "post",
    path: "/v1/routing/preview",
    summary: "Preview how a request would route: the chat route's gates, no side effect; refusals in the body",
    security: [...SECURITY.inference, ...SECURITY.session],
    request: { body: jsonBody(previewBodySchema.meta({ id: "RoutePreviewRequest" })) },
    responses: {
      200: json(
        "The route preview response",
        z
          .looseObject({
            data: z.looseObject({
              requested: z.string(),
              would_dispatch: z.boolean(),
              refusal: z.looseObject({ code: z.string(), message: z.string() }).nullable(),
              ordering: z.enum(["deterministic", "sampled"]),
              routing_seed: z.string().nullable(),
              cascade: z.array(z.looseObject({ model: z.string(), provider: z.string(), endpoint_id: z.string() })),
            }),
          })
          .meta({ id: "RoutePreview" }),
      ),
      ...refusals(400, 401, 403, 429),
    },
  });

  const jsonRpc = z.looseObject({ jsonrpc: z.literal("2.0"), method: z.string().optional(), id: z.union([z.string(), z.number(), z.null()]).optional() });
  registry.registerPath({
    method: "post",
    path: "/mcp",
    summary: "MCP server (Streamable HTTP, stateless, protocol 2025-06-18); one JSON-RPC message per request",
    security: SECURITY.inference,
    request: { body: jsonBody(jsonRpc) },
    responses: {
      200: json("A JSON-RPC response", jsonRpc),
      202: { description: "A notification, answered with no body" },
      ...refusals(400, 401, 403, 429),
    },
  });
  registry.registerPath({
    method: "get",
    path: "/mcp",
    summary: "Always 405: the server opens no event stream",
    responses: { 405: { description: "Method not allowed" } },
  });
}
