import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SELF_CALL_HEADER } from "@router/management-api";
import { call, startConsoleHarness, type ConsoleHarness } from "./console-harness";

/**
 * The MCP server at the console, as the gateway forwards it, with a recording stand-in for the
 * gateway whose routes the tools call: the JSON-RPC checks made before the SDK, the tools' calls
 * carrying the caller's headers and the self-call token unchanged, and the routes' answers as tool
 * results.
 */

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Answers every route with JSON; `GET /v1/key` as a refused key, the rest 200 with what was asked. */
async function startFakeGateway(): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const got = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      received.push(got);
      if (req.url === "/v1/key") {
        res.writeHead(403, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "key_paused", message: "paused" } }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data: { asked: `${got.method} ${got.url}` } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server };
}

let h: ConsoleHarness;
let gateway: Awaited<ReturnType<typeof startFakeGateway>>;

beforeAll(async () => {
  gateway = await startFakeGateway();
  h = await startConsoleHarness("cmcp", { gatewayUrl: `${gateway.url}/` });
});
afterAll(async () => {
  await h.close();
  await new Promise((resolve) => gateway.server.close(resolve));
});

/** What the gateway passes on with a forwarded /mcp (`CONSOLE_MCP`). */
const forwarded = {
  authorization: "Bearer rt-v1-caller",
  "user-agent": "agent/1.0",
  "http-referer": "https://app.example",
  "x-title": "An App",
  [SELF_CALL_HEADER]: "eyJhZGRyIjoiMTk4LjUxLjEwMC43In0.signed-by-the-gateway",
};

const rpc = (body: unknown, headers: Record<string, string> = forwarded) =>
  call(h.url, "POST", "/mcp", {
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    rawBody: typeof body === "string" ? body : JSON.stringify(body),
  });

const toolCall = async (name: string, args: Record<string, unknown>) => {
  const res = await rpc({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name, arguments: args } });
  expect(res.status).toBe(200);
  return res.body.result as { content: Array<{ type: string; text: string }>; isError: boolean };
};

describe("POST /mcp at the console", () => {
  it("initializes at the pinned protocol revision without a session and lists the five tools", async () => {
    const init = await rpc({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    expect(init.status).toBe(200);
    expect(init.body.result).toMatchObject({ protocolVersion: "2025-06-18", serverInfo: { name: "router" } });
    expect(init.headers.get("mcp-session-id")).toBeNull();
    const list = await rpc({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    const tools = list.body.result.tools as Array<{ name: string }>;
    expect(tools.map((t) => t.name).sort()).toEqual(["chat_completion", "get_key_usage", "list_model_endpoints", "list_models", "preview_route"]);
  });

  it("calls the gateway's route as the caller: its headers and the self-call token unchanged, nothing else of the request", async () => {
    const before = gateway.received.length;
    const result = await toolCall("list_models", { limit: 2, offset: 4 });
    expect(result).toEqual({ content: [{ type: "text", text: JSON.stringify({ data: { asked: "GET /v1/models?limit=2&offset=4" } }) }], isError: false });
    expect(gateway.received.length).toBe(before + 1);
    const got = gateway.received.at(-1)!;
    expect(got.headers).toMatchObject(forwarded);
    expect(got.headers["mcp-protocol-version"]).toBeUndefined();
    expect(got.headers.cookie).toBeUndefined();
  });

  it("sends a tool's arguments as the route's JSON body; chat completions never stream", async () => {
    await toolCall("preview_route", { model: "openai/gpt-4o-mini", routing_seed: "s" });
    expect(gateway.received.at(-1)).toMatchObject({ method: "POST", url: "/v1/routing/preview", headers: { "content-type": "application/json" } });
    expect(JSON.parse(gateway.received.at(-1)!.body)).toEqual({ model: "openai/gpt-4o-mini", routing_seed: "s" });

    await toolCall("chat_completion", { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }], stream: true });
    expect(gateway.received.at(-1)).toMatchObject({ method: "POST", url: "/v1/chat/completions" });
    expect(JSON.parse(gateway.received.at(-1)!.body)).toMatchObject({ messages: [{ role: "user", content: "hi" }], stream: false });

    await toolCall("list_model_endpoints", { model: "openai/gpt-4o-mini" });
    expect(gateway.received.at(-1)).toMatchObject({ method: "GET", url: "/v1/models/openai/gpt-4o-mini/endpoints" });
  });

  it("answers a route's refusal as a tool error with the route's body", async () => {
    const result = await toolCall("get_key_usage", {});
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.content[0]?.text ?? "{}")).toEqual({ error: { code: "key_paused", message: "paused" } });
  });

  it("refuses bad arguments before any route is called", async () => {
    const before = gateway.received.length;
    const result = await toolCall("list_model_endpoints", { model: "not a slug" });
    expect(result.isError).toBe(true);
    expect(gateway.received.length).toBe(before);
  });

  it("answers notifications 202 with no body and an explicit null id as a request", async () => {
    const note = await rpc({ jsonrpc: "2.0", method: "notifications/initialized" });
    expect(note.status).toBe(202);
    expect(note.body).toBeNull();
    const nullId = await rpc({ jsonrpc: "2.0", id: null, method: "ping" });
    expect(nullId.status).toBe(200);
    expect(nullId.body).toEqual({ jsonrpc: "2.0", id: null, result: {} });
  });

  const deep = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
  it.each([
    ["a batch", JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "ping" }]), -32600, /batching/],
    ["malformed JSON", '{"jsonrpc": "2.0", ', -32700, /not JSON/],
    ["a string", '"ping"', -32600, /one JSON-RPC 2.0 message/],
    ["a wrong version", JSON.stringify({ jsonrpc: "1.0", id: 1, method: "ping" }), -32600, /jsonrpc/],
    ["array params", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: [] }), -32600, /params/],
    ["a fractional id", JSON.stringify({ jsonrpc: "2.0", id: 1.5, method: "ping" }), -32600, /id/],
    [
      "a message nested too deep",
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_models","arguments":${deep(100_000)}}}`,
      -32600,
      /^params\.arguments\.a\.a\.a\.a\.a\.a: nested more than 128 levels deep$/,
    ],
  ])("refuses %s with a JSON-RPC error of id null, never a 5xx", async (_what, body, code, message) => {
    const res = await rpc(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code } });
    expect(res.body.error.message).toMatch(message);
  });

  it("answers GET (the server-initiated stream) and other methods 405, allowing POST", async () => {
    for (const method of ["GET", "DELETE", "PUT"]) {
      const res = await call(h.url, method, "/mcp");
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
      expect(res.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32000 } });
    }
  });
});
