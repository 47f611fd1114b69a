import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { gatewayClient, startFakeOpenAi, startStack, waitFor, type FakeUpstream, type Stack } from "@router/testkit";

/**
 * The MCP server end to end with the official SDK client: tools adapt documented routes and pass
 * the same authentication, ceilings, ledger and activity as those routes, over the separate-process
 * stack. Raw JSON-RPC checks the transport's edges.
 */
describe("MCP at POST /mcp", () => {
  let stack: Stack;
  let openai: FakeUpstream;
  let mgmtKey: string;
  let inferenceKey: string;
  let keyHash: string;

  beforeAll(async () => {
    openai = await startFakeOpenAi();
    stack = await startStack({ providerBaseUrls: { openai: openai.url } });
    const org = await stack.createOrg("Acme");
    mgmtKey = org.managementKey;
    const mgmt = gatewayClient(stack.gatewayUrl, mgmtKey);
    expect((await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: "sk-openai-acme-0001" })).status).toBe(201);
    const created = await mgmt.post("/v1/keys", { name: "agent", limit: 5, limit_reset: "monthly", include_byok_in_limit: true });
    expect(created.status).toBe(201);
    inferenceKey = created.json.data.key as string;
    keyHash = created.json.data.hash as string;
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await openai?.close();
  });

  const connect = async (key = inferenceKey) => {
    const client = new Client({ name: "router-e2e", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${stack.gatewayUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    });
    await client.connect(transport);
    return client;
  };

  const rpc = async (body: unknown, key: string | null = inferenceKey, contentType = "application/json") => {
    const headers: Record<string, string> = { "content-type": contentType, accept: "application/json, text/event-stream" };
    if (key) headers.authorization = `Bearer ${key}`;
    const res = await fetch(`${stack.gatewayUrl}/mcp`, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: text ? (JSON.parse(text) as Record<string, any>) : null };
  };

  it("initializes at protocol revision 2025-06-18 without a session, and lists the tools", async () => {
    const client = await connect();
    try {
      expect(client.getServerVersion()).toMatchObject({ name: "router" });
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["chat_completion", "get_key_usage", "list_model_endpoints", "list_models", "preview_route"]);
      expect(tools.find((t) => t.name === "chat_completion")?.inputSchema.required).toEqual(["model", "messages"]);
      await expect(client.ping()).resolves.toEqual({});
    } finally {
      await client.close();
    }
    const init = await rpc({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    expect(init.status).toBe(200);
    expect(init.json?.result.protocolVersion).toBe("2025-06-18");
    expect(init.headers.get("mcp-session-id")).toBeNull();
  });

  it("serves a chat completion through the tool, recorded, settled and counted on the key like the route's", async () => {
    const client = await connect();
    try {
      const before = openai.requests.length;
      const result = await client.callTool({
        name: "chat_completion",
        arguments: { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "Hello over MCP" }], max_tokens: 50 },
      });
      expect(result.isError).toBe(false);
      const completion = JSON.parse((result.content as Array<{ text: string }>)[0]?.text ?? "{}");
      expect(completion).toMatchObject({ object: "chat.completion", model: "openai/gpt-4o-mini" });
      expect(openai.requests.length).toBe(before + 1);
      expect(openai.requests.at(-1)?.headers.authorization).toBe("Bearer sk-openai-acme-0001");

      const mgmt = gatewayClient(stack.gatewayUrl, mgmtKey);
      const row = await waitFor(async () => {
        const res = await mgmt.get(`/v1/activity/requests/${completion.id as string}`);
        return res.status === 200 ? res.json.data : undefined;
      }, { timeoutMs: 15_000 });
      expect(row).toMatchObject({ id: completion.id, status: "complete" });

      const usage = await waitFor(async () => {
        const res = await client.callTool({ name: "get_key_usage", arguments: {} });
        const text = (res.content as Array<{ text: string }>)[0]?.text ?? "{}";
        const info = JSON.parse(text);
        return info.data?.usage > 0 ? info.data : undefined;
      }, { timeoutMs: 15_000 });
      expect(usage).toMatchObject({ limit: 5 });

      const models = await client.callTool({ name: "list_models", arguments: { limit: 2 } });
      expect(JSON.parse((models.content as Array<{ text: string }>)[0]?.text ?? "{}").data).toHaveLength(2);
      const endpoints = await client.callTool({ name: "list_model_endpoints", arguments: { model: "openai/gpt-4o-mini" } });
      expect(endpoints.isError).toBe(false);
      const preview = await client.callTool({ name: "preview_route", arguments: { model: "openai/gpt-4o-mini", routing_seed: "mcp" } });
      expect(JSON.parse((preview.content as Array<{ text: string }>)[0]?.text ?? "{}").data).toMatchObject({
        would_dispatch: true,
        winner: { provider: "openai" },
      });
    } finally {
      await client.close();
    }
  });

  it("answers a route's refusal as a tool error, as the route would", async () => {
    const mgmt = gatewayClient(stack.gatewayUrl, mgmtKey);
    const capped = await mgmt.post("/v1/keys", { name: "spent", limit: 0.000000001, limit_reset: "lifetime", include_byok_in_limit: true });
    const client = await connect(capped.json.data.key as string);
    try {
      // The first request passes the empty ceiling, and its cost then holds it at the limit.
      await client.callTool({ name: "chat_completion", arguments: { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "one" }] } });
      const refused = await waitFor(async () => {
        const res = await client.callTool({ name: "chat_completion", arguments: { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "two" }] } });
        return res.isError ? res : undefined;
      }, { timeoutMs: 15_000 });
      expect(JSON.parse((refused.content as Array<{ text: string }>)[0]?.text ?? "{}").error).toMatchObject({ code: "budget_exceeded" });
    } finally {
      await client.close();
    }
  });

  it("is for inference keys only: none 401, a management key 403, a paused key 403 key_paused", async () => {
    const ping = { jsonrpc: "2.0", id: 1, method: "ping" };
    expect((await rpc(ping, null)).status).toBe(401);
    const mgmt = await rpc(ping, mgmtKey);
    expect(mgmt.status).toBe(403);
    expect(mgmt.json?.error.code).toBe("permission_denied");

    const client = gatewayClient(stack.gatewayUrl, mgmtKey);
    const paused = await client.post("/v1/keys", { name: "paused" });
    await client.patch(`/v1/keys/${paused.json.data.hash as string}`, { paused: true });
    const refused = await rpc(ping, paused.json.data.key as string);
    expect(refused.status).toBe(403);
    expect(refused.json?.error.code).toBe("key_paused");
    expect(keyHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("answers notifications 202 with no body and an explicit null id as a request", async () => {
    const note = await rpc({ jsonrpc: "2.0", method: "notifications/initialized" });
    expect(note.status).toBe(202);
    expect(note.text).toBe("");
    const nullId = await rpc({ jsonrpc: "2.0", id: null, method: "ping" });
    expect(nullId.status).toBe(200);
    expect(nullId.json).toEqual({ jsonrpc: "2.0", id: null, result: {} });
  });

  it.each([
    ["a batch", [{ jsonrpc: "2.0", id: 1, method: "ping" }], 400, -32600],
    ["malformed JSON", "{\"jsonrpc\": \"2.0\", ", 400, -32700],
    ["a string", "\"ping\"", 400, -32600],
    ["a wrong version", { jsonrpc: "1.0", id: 1, method: "ping" }, 400, -32600],
    ["array params", { jsonrpc: "2.0", id: 1, method: "ping", params: [] }, 400, -32600],
  ])("refuses %s with a JSON-RPC error, never a 5xx", async (_what, body, status, code) => {
    const res = await rpc(body);
    expect(res.status).toBe(status);
    expect(res.json).toMatchObject({ jsonrpc: "2.0", id: null, error: { code } });
  });

  it("answers unknown methods and tools as JSON-RPC errors", async () => {
    const unknown = await rpc({ jsonrpc: "2.0", id: 7, method: "resources/list" });
    expect(unknown.json).toMatchObject({ id: 7, error: { code: -32601 } });
    const tool = await rpc({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "no_such_tool", arguments: {} } });
    expect(tool.status).toBeLessThan(500);
    expect(JSON.stringify(tool.json)).toMatch(/no_such_tool/);
  });

  it("answers GET (the server-initiated stream) and other methods 405", async () => {
    for (const method of ["GET", "DELETE", "PUT"]) {
      const res = await fetch(`${stack.gatewayUrl}/mcp`, { method, headers: { authorization: `Bearer ${inferenceKey}` } });
      expect(res.status).toBe(405);
    }
  });
});
