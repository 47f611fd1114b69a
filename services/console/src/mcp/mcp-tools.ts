import type { IncomingMessage } from "node:http";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { RouteInvoker } from "./route-invoker";

/** A route's answer as a tool result: its JSON as one text block; an error status is `isError`. */
function resultOf(answer: { status: number; body: string }): CallToolResult {
  return { content: [{ type: "text", text: answer.body }], isError: answer.status >= 400 };
}

const modelSlug = z
  .string()
  .regex(/^[A-Za-z0-9._-]+\/[A-Za-z0-9._:-]+$/, "a catalog model id, author/slug")
  .describe("A catalog model id, e.g. openai/gpt-4o-mini");

const message = z
  .object({
    role: z.enum(["system", "developer", "user", "assistant", "tool"]),
    content: z.union([z.string(), z.array(z.record(z.string(), z.unknown()))]).nullable(),
  })
  .passthrough();

/**
 * The tools, each an adapter of one documented route, called on the gateway as the MCP caller
 * (`RouteInvoker`). Nothing here decides anything the route does not.
 */
export function registerTools(server: McpServer, routes: RouteInvoker, caller: IncomingMessage): void {
  server.registerTool(
    "list_models",
    {
      title: "List models",
      description: "The model catalog (GET /v1/models): models with their prices and context lengths.",
      inputSchema: {
        limit: z.number().int().min(1).max(500).optional().describe("At most this many models"),
        offset: z.number().int().min(0).optional().describe("Skip this many models"),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ limit, offset }) => {
      const query = new URLSearchParams();
      if (limit !== undefined) query.set("limit", String(limit));
      if (offset !== undefined) query.set("offset", String(offset));
      const qs = query.toString();
      return resultOf(await routes.invoke(caller, { method: "GET", path: `/v1/models${qs ? `?${qs}` : ""}` }));
    },
  );

  server.registerTool(
    "list_model_endpoints",
    {
      title: "A model's endpoints",
      description: "Every provider endpoint serving a model (GET /v1/models/{author}/{slug}/endpoints): price, uptime, latency.",
      inputSchema: { model: modelSlug },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ model }) => {
      const [author, slug] = model.split("/");
      const path = `/v1/models/${encodeURIComponent(author ?? "")}/${encodeURIComponent(slug ?? "")}/endpoints`;
      return resultOf(await routes.invoke(caller, { method: "GET", path }));
    },
  );

  server.registerTool(
    "get_key_usage",
    {
      title: "This key's usage",
      description: "The calling key's spend, ceiling and what remains of it (GET /v1/key).",
      inputSchema: {},
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () => resultOf(await routes.invoke(caller, { method: "GET", path: "/v1/key" })),
  );

  server.registerTool(
    "preview_route",
    {
      title: "Preview a route",
      description:
        "Where a chat request would go (POST /v1/routing/preview): the cascade, the refusals per endpoint, the seed, " +
        "or why it would be refused. Nothing is spent, recorded or sent to a provider.",
      inputSchema: {
        model: z.string().min(1).describe("A model id, alias or @preset/<slug>"),
        models: z.array(z.string()).optional().describe("Fallback models, in order"),
        routing_seed: z.string().max(200).optional().describe("Seeds the weighted draw, to reproduce it"),
        session_id: z.string().optional(),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) => resultOf(await routes.invoke(caller, { method: "POST", path: "/v1/routing/preview", body: args })),
  );

  server.registerTool(
    "chat_completion",
    {
      title: "Chat completion",
      description:
        "One chat completion (POST /v1/chat/completions, not streamed), routed, admitted against the key's ceiling and budgets, " +
        "and recorded like any other request.",
      inputSchema: {
        model: z.string().min(1).describe("A model id, alias or @preset/<slug>"),
        messages: z.array(message).min(1),
        models: z.array(z.string()).optional().describe("Fallback models, in order"),
        max_tokens: z.number().int().min(1).optional(),
        temperature: z.number().min(0).max(2).optional(),
      },
      annotations: { readOnlyHint: false, openWorldHint: true },
    },
    async (args) => resultOf(await routes.invoke(caller, { method: "POST", path: "/v1/chat/completions", body: { ...args, stream: false } })),
  );
}
