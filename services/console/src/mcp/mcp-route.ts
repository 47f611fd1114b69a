import type { ServerResponse } from "node:http";
import type * as McpServerModule from "@modelcontextprotocol/sdk/server/mcp.js";
import type * as McpTransportModule from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import express, { Router, type Request, type Response } from "express";
import { jsonDepthError } from "@router/http-kit";
import {
  checkMessage,
  INVALID_REQUEST,
  JsonRpcRefusal,
  jsonRpcError,
  NULL_ID_ANSWER,
  NULL_ID_PATTERN,
  PARSE_ERROR,
} from "./json-rpc-checks";
import { registerTools } from "./mcp-tools";
import { RouteInvoker } from "./route-invoker";

export const MCP_PATH = "/mcp";

/** The MCP SDK (and the JSON-schema tooling it brings) is loaded on the first MCP request. */
function mcpSdk(): typeof McpServerModule & typeof McpTransportModule {
  /* eslint-disable @typescript-eslint/no-require-imports */
  return {
    ...(require("@modelcontextprotocol/sdk/server/mcp.js") as typeof McpServerModule),
    ...(require("@modelcontextprotocol/sdk/server/streamableHttp.js") as typeof McpTransportModule),
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** Where a process answers on its own host: a wildcard bind answers on loopback (the one-process runner calls its gateway there). */
export function loopbackHostOf(bindHost: string | undefined): string {
  if (!bindHost || bindHost === "0.0.0.0") return "127.0.0.1";
  if (bindHost === "::") return "[::1]";
  return bindHost.includes(":") ? `[${bindHost}]` : bindHost;
}

export interface McpRouteDeps {
  /** The gateway's base URL (CONSOLE_GATEWAY_URL; read on each call): the tools call its routes there. */
  gatewayUrl: () => string;
  version: string;
}

/** Writes the answer with the stand-in id turned back into `null` (same byte length, so headers stay right). */
function restoreNullId(res: ServerResponse): void {
  const patch = (chunk: unknown): unknown => {
    if (typeof chunk === "string") return chunk.replace(NULL_ID_PATTERN, NULL_ID_ANSWER);
    if (Buffer.isBuffer(chunk) || chunk instanceof Uint8Array) {
      return Buffer.from(Buffer.from(chunk).toString("utf8").replace(NULL_ID_PATTERN, NULL_ID_ANSWER), "utf8");
    }
    return chunk;
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.write = ((chunk: unknown, ...rest: unknown[]) => write(patch(chunk), ...rest)) as ServerResponse["write"];
  res.end = ((chunk?: unknown, ...rest: unknown[]) =>
    typeof chunk === "function" || chunk === undefined ? end(chunk, ...rest) : end(patch(chunk), ...rest)) as ServerResponse["end"];
}

/**
 * `POST /mcp`: the MCP server (official SDK, Streamable HTTP transport, stateless: a server and a
 * transport per request, no session id, JSON answers). The gateway forwards it here once it has
 * checked the caller's inference key (`CONSOLE_MCP` in `@router/management-api`); each tool calls a
 * gateway route with the caller's own key, so this service holds no credential of its own.
 * `GET /mcp` (the server-initiated stream) and every other method: 405.
 */
export function mcpRoutes(deps: McpRouteDeps): Router {
  const router = Router();
  const routes = new RouteInvoker({ baseUrl: deps.gatewayUrl });
  // The body is parsed here, not by the app: a malformed one must be a JSON-RPC parse error, not the
  // 400 envelope.
  const rawJson = express.text({ type: () => true, limit: "4mb" });

  router.post(MCP_PATH, rawJson, async (req: Request, res: Response) => {
    const body: unknown = req.body;
    let parsed: unknown = body;
    if (typeof body === "string") {
      try {
        parsed = JSON.parse(body);
      } catch {
        res.status(400).json(jsonRpcError(PARSE_ERROR, "the body is not JSON"));
        return;
      }
    }
    const tooDeep = jsonDepthError(parsed);
    if (tooDeep) {
      res.status(400).json(jsonRpcError(INVALID_REQUEST, tooDeep.message));
      return;
    }
    let checked;
    try {
      checked = checkMessage(parsed);
    } catch (err) {
      if (!(err instanceof JsonRpcRefusal)) throw err;
      res.status(400).json(jsonRpcError(err.code, err.message));
      return;
    }
    const { McpServer, StreamableHTTPServerTransport } = mcpSdk();
    const server = new McpServer({ name: "router", version: deps.version }, { capabilities: { tools: {} } });
    registerTools(server, routes, req);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    if (checked.nullId) restoreNullId(res);
    await server.connect(transport);
    await transport.handleRequest(req, res, checked.message);
  });

  router.all(MCP_PATH, (_req: Request, res: Response) => {
    res.setHeader("allow", "POST");
    res.status(405).json(jsonRpcError(-32000, "method not allowed: this server offers no server-initiated stream; POST JSON-RPC messages"));
  });
  return router;
}
