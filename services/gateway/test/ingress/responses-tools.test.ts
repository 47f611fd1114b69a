import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DomainError } from "@router/errors";
import { parseResponsesRequest } from "../../../../libs/inference-api/src/responses/request";
import { responsesIngress } from "../../src/ingress/responses";
import { flatToolName, translateTools } from "../../../../libs/inference-api/src/responses/tools";
import { cascadeForBuiltinTools, droppedBuiltinTools, droppedToolsHeader } from "../../src/chat/builtin-tools";
import type { ChatContext } from "../../src/chat/chat-context";
import type { SseResponse } from "../../src/ingress/sse-response";
import type { Candidate } from "../../src/dispatch/types";
import type { ClientToolNames } from "../../../../libs/inference-api/src/client-tool-names";

/** What Codex CLI 0.171.0 sends with only a provider block (recorded; see the fixture's comment). */
const codex = JSON.parse(readFileSync(join(__dirname, "fixtures/codex-cli-0.171.0-request.json"), "utf8")) as { body: Record<string, unknown> };
const PROVIDER_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const refusalOf = (f: () => unknown): DomainError => {
  try {
    f();
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error("expected a refusal");
};

describe("Codex CLI's default Responses request", () => {
  const parsed = parseResponsesRequest(codex.body);
  const tools = parsed.request.tools ?? [];

  it("is accepted: its namespace group is flattened into function tools a provider takes, web_search named as a built-in", () => {
    const names = tools.map((t) => t.function.name);
    expect(names).toEqual([
      "exec_command",
      "write_stdin",
      "request_user_input",
      "view_image",
      "multi_agent_v1__close_agent",
      "multi_agent_v1__resume_agent",
      "multi_agent_v1__send_input",
      "multi_agent_v1__spawn_agent",
      "multi_agent_v1__wait_agent",
      "get_goal",
      "create_goal",
      "update_goal",
    ]);
    for (const n of names) expect(n).toMatch(PROVIDER_NAME);
    expect(tools.every((t) => t.type === "function")).toBe(true);
    expect(parsed.builtinTools).toEqual(["web_search"]);
    expect(parsed.toolNames?.get("multi_agent_v1__spawn_agent")).toEqual({ kind: "function", namespace: "multi_agent_v1", name: "spawn_agent" });
    expect(parsed.toolNames?.has("exec_command")).toBe(false);
  });

  it("keeps each grouped function's schema and prefixes the group's description", () => {
    const spawn = tools.find((t) => t.function.name === "multi_agent_v1__spawn_agent")!;
    expect(spawn.function.parameters).toMatchObject({ type: "object" });
    expect(spawn.function.description).toMatch(/^Tools for spawning and managing sub-agents\.\n\n/);
  });

  it("keeps tool_choice and parallel_tool_calls, and its developer messages reach the model", () => {
    expect(parsed.request.tool_choice).toBe("auto");
    expect(parsed.request.parallel_tool_calls).toBe(true);
    const roles = parsed.request.messages.map((m) => m.role);
    expect(roles.filter((r) => r === "user")).toHaveLength(2);
    expect(roles.length).toBe(4);
  });
});

describe("namespaced function calls in history", () => {
  const body = (namespace?: string) => ({
    model: "m",
    tools: [{ type: "namespace", name: "multi_agent_v1", description: "Agents.", tools: [{ type: "function", name: "wait_agent", parameters: { type: "object" } }] }],
    input: [
      { role: "user", content: "wait" },
      // As Codex echoes a call of a namespaced tool: the function's own name and its namespace.
      { type: "function_call", call_id: "call_1", name: "wait_agent", ...(namespace ? { namespace } : {}), arguments: '{"targets":[]}' },
      { type: "function_call_output", call_id: "call_1", output: "timed out" },
    ],
  });

  it("go upstream under the flat name the tool was given", () => {
    const { request } = parseResponsesRequest(body("multi_agent_v1"));
    const assistant = request.messages[1] as { tool_calls: Array<{ function: { name: string } }> };
    expect(assistant.tool_calls[0]?.function.name).toBe("multi_agent_v1__wait_agent");
    expect(request.messages[2]).toMatchObject({ role: "tool", tool_call_id: "call_1", content: "timed out" });
  });

  it("without a namespace keep their name", () => {
    const { request } = parseResponsesRequest(body());
    expect((request.messages[1] as { tool_calls: Array<{ function: { name: string } }> }).tool_calls[0]?.function.name).toBe("wait_agent");
  });

  it("a tool_choice naming a namespaced function names the flat one", () => {
    const { request } = parseResponsesRequest({ ...body(), tool_choice: { type: "function", name: "wait_agent", namespace: "multi_agent_v1" } });
    expect(request.tool_choice).toEqual({ type: "function", function: { name: "multi_agent_v1__wait_agent" } });
  });
});

describe("flat names", () => {
  it("join namespace and name as Codex does, trimming underscores at the join", () => {
    expect(flatToolName("mcp__", "_read")).toBe("mcp__read");
  });

  it("that a provider would refuse or another tool has are shortened with a hash, within 64 characters and distinct", () => {
    const long = flatToolName("n".repeat(60), "tool");
    expect(long).toMatch(PROVIDER_NAME);
    expect(long.length).toBeLessThanOrEqual(64);
    expect(flatToolName("my.server", "read")).toMatch(PROVIDER_NAME);
    const taken = translateTools([
      { type: "function", name: "a__b" },
      { type: "namespace", name: "a", tools: [{ type: "function", name: "b" }] },
    ]).tools.map((t) => t.function.name);
    expect(new Set(taken).size).toBe(2);
    expect(taken[0]).toBe("a__b");
  });
});

describe("custom (freeform) tools", () => {
  const grammar = "start: begin_patch hunk+ end_patch";
  const body = {
    model: "m",
    tools: [{ type: "custom", name: "apply_patch", description: "Edit files.", format: { type: "grammar", syntax: "lark", definition: grammar } }],
    input: [
      { role: "user", content: "patch it" },
      { type: "custom_tool_call", call_id: "call_9", name: "apply_patch", input: "*** Begin Patch" },
      { type: "custom_tool_call_output", call_id: "call_9", output: "Done!" },
    ],
  };

  it("become a function taking the text as one string, the grammar in its description; calls in history carry it as that argument", () => {
    const { request, toolNames } = parseResponsesRequest(body);
    const tool = request.tools?.[0]?.function;
    expect(tool?.name).toBe("apply_patch");
    expect(tool?.parameters).toMatchObject({ type: "object", required: ["input"], properties: { input: { type: "string" } } });
    expect(JSON.stringify(tool?.parameters)).toContain(grammar);
    expect(toolNames?.get("apply_patch")).toEqual({ kind: "custom", name: "apply_patch" });
    const call = (request.messages[1] as { tool_calls: Array<{ id: string; function: { name: string; arguments: string } }> }).tool_calls[0];
    expect(call).toMatchObject({ id: "call_9", function: { name: "apply_patch" } });
    expect(JSON.parse(call!.function.arguments)).toEqual({ input: "*** Begin Patch" });
    expect(request.messages[2]).toMatchObject({ role: "tool", tool_call_id: "call_9", content: "Done!" });
  });
});

describe("built-in tools", () => {
  it("of every kind are named, each once, in order, and never sent as function tools", () => {
    const { request, builtinTools } = parseResponsesRequest({
      model: "m",
      input: "hi",
      tools: [
        { type: "web_search_preview" },
        { type: "file_search", vector_store_ids: ["vs_1"] },
        { type: "web_search_preview" },
        { type: "code_interpreter", container: { type: "auto" } },
        { type: "image_generation" },
        { type: "computer_use_preview", display_width: 1024, display_height: 768, environment: "browser" },
      ],
      tool_choice: "auto",
    });
    expect(builtinTools).toEqual(["web_search_preview", "file_search", "code_interpreter", "image_generation", "computer_use_preview"]);
    expect(request.tools).toBeUndefined();
    // A choice among tools of which none goes upstream asks the provider for nothing.
    expect(request.tool_choice).toBeUndefined();
  });

  it("a malformed function tool is still a 400 naming its field", () => {
    const e = refusalOf(() => parseResponsesRequest({ model: "m", input: "hi", tools: [{ type: "function", name: "bad name" }] }));
    expect(e.status).toBe(400);
    expect(e.details?.field).toBe("tools.0.name");
  });

  const endpoint = { apiFamily: "openai", providerSlug: "openai", modelId: "openai/gpt-4o-mini" } as Candidate;

  it("that no endpoint runs are dropped for it and named in the header", () => {
    expect(droppedBuiltinTools(["web_search", "file_search"], endpoint, null)).toEqual(["web_search", "file_search"]);
    expect(droppedToolsHeader(["web_search", "file_search"])).toEqual({ "x-router-dropped-tools": "web_search,file_search" });
    expect(droppedToolsHeader([])).toEqual({});
  });

  it("leave the cascade alone without require_parameters, and are refused (400 naming the tool) with it", () => {
    expect(cascadeForBuiltinTools([endpoint], ["web_search"], false, null)).toEqual([endpoint]);
    expect(cascadeForBuiltinTools([endpoint], [], true, null)).toEqual([endpoint]);
    const e = refusalOf(() => cascadeForBuiltinTools([endpoint], ["web_search"], true, null));
    expect(e.status).toBe(400);
    expect(e.code).toBe("invalid_request");
    expect(e.message).toContain("web_search");
    expect(e.details).toMatchObject({ field: "tools", tools: ["web_search"] });
  });

  it("run on an endpoint sent the client's own body (Anthropic's server tools on a Messages request served by Anthropic), and only there", () => {
    const anthropic = { apiFamily: "anthropic", providerSlug: "anthropic", modelId: "anthropic/claude-sonnet-4.5" } as Candidate;
    const messages = { family: "anthropic" as const, body: {} };
    expect(droppedBuiltinTools(["web_search"], anthropic, messages)).toEqual([]);
    expect(droppedBuiltinTools(["web_search"], endpoint, messages)).toEqual(["web_search"]);
    // A Responses request has no body an endpoint takes as it is: OpenAI's built-ins run nowhere.
    expect(droppedBuiltinTools(["web_search"], anthropic, null)).toEqual(["web_search"]);
    expect(cascadeForBuiltinTools([endpoint, anthropic], ["web_search"], true, messages)).toEqual([anthropic]);
  });
});

describe("tool calls rendered back under the client's names", () => {
  const toolNames: ClientToolNames = new Map([
    ["multi_agent_v1__wait_agent", { kind: "function", namespace: "multi_agent_v1", name: "wait_agent" }],
    ["apply_patch", { kind: "custom", name: "apply_patch" }],
  ]);
  const ctx = { id: "gen-abc", created: 1700000000, request: { model: "m", messages: [] }, echo: null, toolNames } as unknown as ChatContext;
  const candidate = { modelId: "m", providerSlug: "openai" } as Candidate;
  const usage = { prompt: 10, completion: 5, cached: 0, reasoning: 0 };
  const calls = [
    { id: "c1", type: "function" as const, function: { name: "multi_agent_v1__wait_agent", arguments: '{"targets":[]}' } },
    { id: "c2", type: "function" as const, function: { name: "apply_patch", arguments: '{"input":"*** Begin Patch\\n"}' } },
    { id: "c3", type: "function" as const, function: { name: "exec_command", arguments: '{"cmd":"ls"}' } },
  ];

  it("in a whole answer: function_call with namespace, custom_tool_call with its input, plain calls unchanged", () => {
    const body = responsesIngress.render(ctx, {
      candidate,
      usage,
      meta: null,
      completion: {
        choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: calls }, finish_reason: "tool_calls", native_finish_reason: "tool_calls" }],
      } as never,
    });
    expect(body.output).toEqual([
      { type: "function_call", id: "fc_abc_0", call_id: "c1", name: "wait_agent", namespace: "multi_agent_v1", arguments: '{"targets":[]}', status: "completed" },
      { type: "custom_tool_call", id: "ctc_abc_1", call_id: "c2", name: "apply_patch", input: "*** Begin Patch\n", status: "completed" },
      { type: "function_call", id: "fc_abc_2", call_id: "c3", name: "exec_command", arguments: '{"cmd":"ls"}', status: "completed" },
    ]);
  });

  it("in a stream: the items carry the client's names; a custom call's input is sent whole when it closes", async () => {
    const events: Array<{ event: string; data: Record<string, unknown> }> = [];
    const sse = { event: (event: string, json: string) => events.push({ event, data: JSON.parse(json) as Record<string, unknown> }), end: () => undefined };
    const out = responsesIngress.stream(ctx, sse as unknown as SseResponse);
    out.commit(candidate);
    const chunk = (tool_calls: unknown) => out.chunk([{ index: 0, delta: { tool_calls } as never, finish_reason: null, native_finish_reason: null }]);
    chunk([{ index: 0, id: "c1", type: "function", function: { name: "multi_agent_v1__wait_agent", arguments: '{"targets"' } }]);
    chunk([{ index: 0, function: { arguments: ":[]}" } }]);
    chunk([{ index: 1, id: "c2", type: "function", function: { name: "apply_patch", arguments: '{"input":' } }]);
    chunk([{ index: 1, function: { arguments: '"x"}' } }]);
    await out.end({ candidate, usage, finishReason: "tool_calls", nativeFinishReason: "tool_calls", meta: null });
    const added = events.filter((e) => e.event === "response.output_item.added").map((e) => e.data.item);
    expect(added).toMatchObject([
      { type: "function_call", name: "wait_agent", namespace: "multi_agent_v1" },
      { type: "custom_tool_call", name: "apply_patch" },
    ]);
    const argDeltas = events.filter((e) => e.event === "response.function_call_arguments.delta").map((e) => e.data.delta);
    expect(argDeltas).toEqual(['{"targets"', ":[]}"]);
    expect(events.find((e) => e.event === "response.function_call_arguments.done")?.data).toMatchObject({ name: "wait_agent", arguments: '{"targets":[]}' });
    expect(events.find((e) => e.event === "response.custom_tool_call_input.done")?.data).toMatchObject({ input: "x" });
    const done = events.filter((e) => e.event === "response.output_item.done").map((e) => e.data.item);
    expect(done).toMatchObject([
      { type: "function_call", name: "wait_agent", namespace: "multi_agent_v1", status: "completed" },
      { type: "custom_tool_call", call_id: "c2", name: "apply_patch", input: "x", status: "completed" },
    ]);
  });
});
