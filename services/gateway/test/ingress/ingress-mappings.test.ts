import { DomainError } from "@router/errors";
import { parseMessages, parseMessagesRequest } from "../../../../libs/inference-api/src/anthropic-messages/request";
import { anthropicMessagesIngress, stopReasonOf } from "../../src/ingress/anthropic-messages";
import { parseResponsesRequest } from "../../../../libs/inference-api/src/responses/request";
import { responsesIngress } from "../../src/ingress/responses";
import { usageBody } from "../../src/ingress/chat-completions/shapes";
import { reasoningDetailOf } from "../../../../libs/inference-api/src/responses/encrypted-reasoning";
import { blocksOf, StreamBlocks, type BlockSink } from "../../../../libs/inference-api/src/output-blocks";
import type { ChatContext } from "../../src/chat/chat-context";
import type { Candidate } from "../../src/dispatch/types";
import type { SseResponse } from "../../src/ingress/sse-response";
import { parseChatRequest } from "@router/chat-request";
import { adapterFor } from "@router/providers";
import { bodyOf, target } from "../providers/wire-samples";

const fieldOf = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e instanceof DomainError ? e.details?.field : e;
  }
  return undefined;
};

describe("the Responses request mapping", () => {
  it("maps instructions, items, tools, the token bound, effort and a json_schema format to the chat request", () => {
    const { request, echo } = parseResponsesRequest({
      model: "openai/gpt-4o-mini",
      instructions: "Be brief.",
      input: [
        { role: "user", content: [{ type: "input_text", text: "Weather?" }, { type: "input_image", image_url: "https://x.test/a.png" }] },
        { type: "function_call", call_id: "c1", name: "w", arguments: '{"city":"Oslo"}' },
        { type: "function_call", call_id: "c2", name: "w", arguments: '{"city":"Rome"}' },
        { type: "function_call_output", call_id: "c1", output: "cold" },
        { type: "reasoning", id: "rs_1", summary: [] },
      ],
      tools: [{ type: "function", name: "w", parameters: { type: "object" } }],
      tool_choice: { type: "function", name: "w" },
      max_output_tokens: 300,
      reasoning: { effort: "minimal" },
      text: { format: { type: "json_schema", name: "out", schema: { type: "object" }, strict: true } },
      store: true,
      metadata: { team: "a" },
    });
    expect(request.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: [{ type: "text", text: "Weather?" }, { type: "image_url", image_url: { url: "https://x.test/a.png" } }] },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c1", type: "function", function: { name: "w", arguments: '{"city":"Oslo"}' } },
          { id: "c2", type: "function", function: { name: "w", arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "cold" },
    ]);
    expect(request).toMatchObject({
      max_tokens: 300,
      reasoning: { effort: "low" },
      tools: [{ type: "function", function: { name: "w", parameters: { type: "object" } } }],
      tool_choice: { type: "function", function: { name: "w" } },
      response_format: { type: "json_schema", json_schema: { name: "out", schema: { type: "object" }, strict: true } },
    });
    // `store` as the expansion before parsing decided it (stored-input.ts): parsing alone echoes what the body says.
    expect(echo).toMatchObject({ instructions: "Be brief.", store: true, metadata: { team: "a" }, max_output_tokens: 300 });
  });

  it("refuses an unexpanded item reference, malformed tools and bad items, naming the field", () => {
    // Stored items replace references before parsing (stored-input.ts): one left was never found.
    expect(fieldOf(() => parseResponsesRequest({ input: [{ type: "item_reference", id: "x" }] }))).toBe("input.0.id");
    expect(fieldOf(() => parseResponsesRequest({ input: "Hi", conversation: "conv_1" }))).toBe("conversation");
    // Built-in tools are named and dropped, not refused (responses-tools.test.ts); a malformed group is refused.
    expect(fieldOf(() => parseResponsesRequest({ input: "Hi", tools: [{ type: "namespace", name: "n", tools: [] }] }))).toBe("tools.0.tools");
    expect(fieldOf(() => parseResponsesRequest({ input: [{ type: "function_call", call_id: "c", name: "w", arguments: "{" }] }))).toBe(
      "input.0.arguments",
    );
    expect(fieldOf(() => parseResponsesRequest({ input: 3 }))).toBe("input");
    expect(fieldOf(() => parseResponsesRequest({ input: "Hi", background: true }))).toBe("background");
  });

  it("continues signed and redacted reasoning: the output items' encrypted_content goes back on the assistant turn", () => {
    const thought = {
      role: "assistant" as const,
      content: null,
      reasoning: "hmm",
      reasoning_details: [
        { type: "reasoning.text" as const, text: "hmm", signature: "sig-1", format: "anthropic-claude-v1", index: 0 },
        { type: "reasoning.encrypted" as const, data: "opaque", format: "anthropic-claude-v1", index: 1 },
      ],
      tool_calls: [{ id: "toolu_1", type: "function" as const, function: { name: "w", arguments: '{"city":"Oslo"}' } }],
    };
    const completion = { choices: [{ index: 0, message: thought, finish_reason: "tool_calls" as const, native_finish_reason: "tool_use" }], usage };
    const output = responsesIngress.render(ctx(), { candidate, completion, usage, meta: null }).output as Array<Record<string, unknown>>;
    expect(output.map((o) => o.type)).toEqual(["reasoning", "reasoning", "function_call"]);
    expect(output[0]).toMatchObject({ summary: [], content: [{ type: "reasoning_text", text: "hmm" }], encrypted_content: expect.stringMatching(/^[\w-]+$/) });
    expect(output[1]).not.toHaveProperty("content");

    const { request } = parseResponsesRequest({
      input: [{ role: "user", content: "Weather?" }, ...output, { type: "function_call_output", call_id: "toolu_1", output: "cold" }],
      reasoning: { effort: "high" },
    });
    expect(request.messages).toEqual([
      { role: "user", content: "Weather?" },
      { role: "assistant", content: null, tool_calls: thought.tool_calls, reasoning_details: thought.reasoning_details },
      { role: "tool", tool_call_id: "toolu_1", content: "cold" },
    ]);
    // Anthropic gets the turn back starting with the thinking it signed.
    const sent = bodyOf(adapterFor("anthropic", "anthropic")!.buildRequest(request, target({ providerSlug: "anthropic" }), false));
    expect(sent.thinking).toMatchObject({ type: "enabled" });
    expect(sent.messages[1].content).toEqual([
      { type: "thinking", thinking: "hmm", signature: "sig-1" },
      { type: "redacted_thinking", data: "opaque" },
      { type: "tool_use", id: "toolu_1", name: "w", input: { city: "Oslo" } },
    ]);
  });

  it("puts reasoning on the assistant message that follows it, and drops reasoning with nothing to continue", () => {
    const [signed] = responsesIngress.render(ctx(), {
      candidate,
      completion: {
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: null, reasoning_details: [{ type: "reasoning.text", text: "t", signature: "s", format: "anthropic-claude-v1", index: 0 }] },
            finish_reason: "stop",
            native_finish_reason: "end_turn",
          },
        ],
        usage,
      },
      usage,
      meta: null,
    }).output as Array<Record<string, unknown>>;
    const { request } = parseResponsesRequest({
      input: [
        { role: "user", content: "Hi" },
        { type: "reasoning", id: "rs_0", summary: [], content: [{ type: "reasoning_text", text: "unsigned" }] },
        { type: "reasoning", id: "rs_1", summary: [], encrypted_content: null },
        signed,
        { role: "assistant", content: [{ type: "output_text", text: "Hello." }] },
        signed,
        { role: "user", content: "Again" },
      ],
    });
    expect(request.messages).toEqual([
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello.", reasoning_details: [{ type: "reasoning.text", text: "t", signature: "s", format: "anthropic-claude-v1", index: 0 }] },
      { role: "user", content: "Again" },
    ]);
  });

  it("refuses an encrypted_content Router did not make, naming the field", () => {
    const encode = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
    const withReasoning = (encrypted_content: string) => () =>
      parseResponsesRequest({ input: [{ role: "user", content: "Hi" }, { type: "reasoning", summary: [], encrypted_content }] });
    for (const bad of ["gAAAAABoZ-not-ours==", "", encode({ type: "reasoning.text", text: "t", format: "anthropic-claude-v1" }), encode(["x"]), "bm90IGpzb24"]) {
      expect(fieldOf(withReasoning(bad))).toBe("input.1.encrypted_content");
    }
    expect(reasoningDetailOf(encode({ type: "reasoning.encrypted", data: "d", format: null }))).toEqual({ type: "reasoning.encrypted", data: "d", format: null });
  });
});

describe("the Anthropic Messages request mapping", () => {
  it("maps system blocks, tool results, images, signed thinking, tools, tool choice and thinking", () => {
    const request = parseMessagesRequest({
      model: "anthropic/claude-sonnet-4",
      max_tokens: 4000,
      system: [{ type: "text", text: "Sys " }, { type: "text", text: "prompt." }],
      messages: [
        { role: "user", content: "Look" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "hmm", signature: "sig" },
            { type: "text", text: "Looking." },
            { type: "tool_use", id: "toolu_1", name: "look", input: { at: "sky" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "blue" }] },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
          ],
        },
      ],
      tools: [{ name: "look", input_schema: { type: "object" } }],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
      thinking: { type: "enabled", budget_tokens: 2048 },
      stop_sequences: ["END"],
      metadata: { user_id: "u1" },
    });
    expect(request.messages).toEqual([
      { role: "system", content: "Sys prompt." },
      { role: "user", content: "Look" },
      {
        role: "assistant",
        content: "Looking.",
        tool_calls: [{ id: "toolu_1", type: "function", function: { name: "look", arguments: '{"at":"sky"}' } }],
        reasoning_details: [{ type: "reasoning.text", text: "hmm", signature: "sig", format: "anthropic-claude-v1", index: 0 }],
      },
      { role: "tool", tool_call_id: "toolu_1", content: "blue" },
      { role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] },
    ]);
    expect(request).toMatchObject({
      max_tokens: 4000,
      tool_choice: "required",
      parallel_tool_calls: false,
      reasoning: { max_tokens: 2048 },
      stop: ["END"],
      user: "u1",
      tools: [{ type: "function", function: { name: "look", parameters: { type: "object" } } }],
    });
  });

  it("requires max_tokens and refuses bad roles and bad nested blocks, naming the nested field", () => {
    expect(fieldOf(() => parseMessagesRequest({ messages: [{ role: "user", content: "Hi" }] }))).toBe("max_tokens");
    expect(fieldOf(() => parseMessagesRequest({ max_tokens: 5, messages: [{ role: "tool", content: "Hi" }] }))).toBe("messages.0.role");
    const image = (media_type: string) => ({ type: "image", source: { type: "base64", media_type, data: "AAAA" } });
    const inToolResult = {
      max_tokens: 5,
      messages: [{ role: "user", content: [{ type: "text", text: "Hi" }, { type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "ok" }, image("text/plain")] }] }],
    };
    expect(fieldOf(() => parseMessagesRequest(inToolResult))).toBe("messages.0.content.1.content.1.source.media_type");
    expect(fieldOf(() => parseMessagesRequest({ max_tokens: 5, messages: [{ role: "user", content: [{ type: "text" }] }] }))).toBe("messages.0.content.0.text");
    expect(fieldOf(() => parseMessagesRequest({ max_tokens: 5, messages: [{ role: "user", content: "Hi" }], tools: [{ name: "no spaces allowed" }] }))).toBe("tools.0.name");
    expect(fieldOf(() => parseMessagesRequest({ max_tokens: 5, messages: [{ role: "user", content: "Hi" }], thinking: { type: "enabled", budget_tokens: 10 } }))).toBe(
      "thinking.budget_tokens",
    );
  });

  it("takes what Claude Code sends for a model it does not know: system messages, adaptive thinking with effort, images and documents in tool results, server tools", () => {
    const body = {
      model: "openai/gpt-4o",
      max_tokens: 32000,
      system: [{ type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral" } }],
      messages: [
        { role: "user", content: [{ type: "text", text: "Read the logo", cache_control: { type: "ephemeral", ttl: "1h" } }] },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "/logo.png" } }] },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_1",
              content: [
                { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBOR" } },
                { type: "document", title: "notes", source: { type: "text", media_type: "text/plain", data: "page one" } },
              ],
            },
          ],
        },
        { role: "system", content: "<system-reminder>todo list is empty</system-reminder>" },
        { role: "user", content: [{ type: "search_result", source: "s", title: "t", content: [] }, { type: "text", text: "What is it?" }] },
      ],
      tools: [{ name: "Read", input_schema: { type: "object" } }, { type: "web_search_20250305", name: "web_search", max_uses: 5 }],
      thinking: { type: "adaptive" },
      output_config: { effort: "medium" },
      context_management: { edits: [{ type: "clear_tool_uses_20250919" }] },
      metadata: { user_id: "user_abc_session_1" },
      provider: { sort: "price" },
    };
    const { request, native, providerTools } = parseMessages(body);
    expect(request.messages).toEqual([
      { role: "system", content: "You are Claude Code." },
      { role: "user", content: "Read the logo" },
      { role: "assistant", content: null, tool_calls: [{ id: "toolu_1", type: "function", function: { name: "Read", arguments: '{"file_path":"/logo.png"}' } }] },
      { role: "tool", tool_call_id: "toolu_1", content: "" },
      {
        role: "user",
        content: [
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBOR" } },
          { type: "text", text: "notes\npage one" },
        ],
      },
      { role: "system", content: "<system-reminder>todo list is empty</system-reminder>" },
      { role: "user", content: "What is it?" },
    ]);
    expect(request.reasoning).toEqual({ effort: "medium" });
    expect(request.tools).toEqual([{ type: "function", function: { name: "Read", parameters: { type: "object" } } }]);
    expect(providerTools).toEqual(["web_search"]);
    expect(request.provider).toEqual({ sort: "price" });
    // The client's body, Router's own fields out, everything else as written.
    const { provider: _provider, ...rest } = body;
    expect(native).toEqual({ family: "anthropic", body: rest });
  });

  it("takes Claude Code's session from metadata.user_id as the sticky session, unless the body names one", () => {
    const user_id = JSON.stringify({ device_id: "d1", account_uuid: "", session_id: "25f458b8-45ac" });
    const base = { max_tokens: 5, messages: [{ role: "user", content: "Hi" }] };
    expect(parseMessagesRequest({ ...base, metadata: { user_id } }).session_id).toBe("25f458b8-45ac");
    expect(parseMessagesRequest({ ...base, metadata: { user_id }, session_id: "mine" }).session_id).toBe("mine");
    expect(parseMessagesRequest({ ...base, metadata: { user_id: "user-42" } }).session_id).toBeUndefined();
    expect(parseMessagesRequest({ ...base, metadata: { user_id: "{not json" } }).session_id).toBeUndefined();
  });

  it("keeps a failed tool_result's is_error: Anthropic gets it, Gemini gets the result under error, OpenAI-compatible the content alone", () => {
    const request = parseMessagesRequest({
      max_tokens: 100,
      messages: [
        { role: "user", content: "Weather?" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "w", input: {} }, { type: "tool_use", id: "toolu_2", name: "w", input: {} }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: "timeout", is_error: true },
            { type: "tool_result", tool_use_id: "toolu_2", content: "sunny", is_error: false },
          ],
        },
      ],
    });
    expect(request.messages.slice(2)).toEqual([
      { role: "tool", tool_call_id: "toolu_1", content: "timeout", is_error: true },
      { role: "tool", tool_call_id: "toolu_2", content: "sunny" },
    ]);
    const sent = (family: string, slug: string) => bodyOf(adapterFor(family, slug)!.buildRequest(request, target({ providerSlug: slug }), false));
    expect(sent("anthropic", "anthropic").messages.at(-1).content).toEqual([
      { type: "tool_result", tool_use_id: "toolu_1", content: "timeout", is_error: true },
      { type: "tool_result", tool_use_id: "toolu_2", content: "sunny" },
    ]);
    expect(sent("google", "google").contents.at(-1).parts).toEqual([
      { functionResponse: { name: "w", response: { error: "timeout" } } },
      { functionResponse: { name: "w", response: { content: "sunny" } } },
    ]);
    expect(sent("openai", "openai").messages.slice(-2)).toEqual([
      { role: "tool", tool_call_id: "toolu_1", content: "timeout" },
      { role: "tool", tool_call_id: "toolu_2", content: "sunny" },
    ]);
  });

  it("takes no is_error on the chat route: the OpenAI format has none", () => {
    const request = parseChatRequest({
      messages: [
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "w", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: "timeout", is_error: true },
      ],
    });
    expect(request.messages[1]).toEqual({ role: "tool", tool_call_id: "c1", content: "timeout" });
  });

  it("maps finish reasons to stop reasons, keeping Anthropic's own", () => {
    expect(stopReasonOf("stop", "stop_sequence")).toBe("stop_sequence");
    expect(stopReasonOf("length", "MAX_TOKENS")).toBe("max_tokens");
    expect(stopReasonOf("tool_calls", "tool_calls")).toBe("tool_use");
    expect(stopReasonOf("content_filter", "SAFETY")).toBe("refusal");
    expect(stopReasonOf("stop", "stop")).toBe("end_turn");
  });
});

const candidate = { modelId: "openai/gpt-4o-mini", providerSlug: "openai" } as Candidate;
const ctx = (echo: Record<string, unknown> | null = null) =>
  ({ id: "gen-abc", created: 1700000000, request: { model: "openai/gpt-4o-mini", messages: [] }, echo, toolNames: new Map() }) as unknown as ChatContext;
const usage = { prompt: 10, completion: 5, cached: 4, reasoning: 2 };
const message = {
  role: "assistant" as const,
  content: "Hi.",
  reasoning: "think",
  tool_calls: [{ id: "c1", type: "function" as const, function: { name: "w", arguments: '{"a":1}' } }],
};

describe("rendering a whole answer", () => {
  const completion = { choices: [{ index: 0, message, finish_reason: "tool_calls" as const, native_finish_reason: "tool_calls" }], usage };

  it("as a Responses response: reasoning, message and function call items, usage", () => {
    const body = responsesIngress.render(ctx({ store: false }), { candidate, completion, usage, meta: null });
    expect(body).toMatchObject({ id: "gen-abc", object: "response", status: "completed", store: false, model: "openai/gpt-4o-mini" });
    expect((body.output as Array<{ type: string }>).map((o) => o.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(body.output).toContainEqual(expect.objectContaining({ type: "function_call", call_id: "c1", name: "w", arguments: '{"a":1}' }));
    expect(body.usage).toEqual({
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 4 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 2 },
      total_tokens: 15,
    });
  });

  it("as an Anthropic message: thinking, text and tool_use blocks; input tokens without the cached ones", () => {
    const body = anthropicMessagesIngress.render(ctx(), { candidate, completion, usage, meta: null });
    expect(body).toMatchObject({ id: "gen-abc", type: "message", role: "assistant", stop_reason: "tool_use" });
    expect(body.content).toEqual([
      { type: "thinking", thinking: "think", signature: "" },
      { type: "text", text: "Hi." },
      { type: "tool_use", id: "c1", name: "w", input: { a: 1 } },
    ]);
    expect(body.usage).toEqual({
      input_tokens: 6,
      output_tokens: 5,
      cache_read_input_tokens: 4,
      cache_creation_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    });
  });

  it("reports cache writes per TTL in each format: input tokens exclude reads and writes on Messages", () => {
    const cachedUsage = { prompt: 1000, completion: 5, cached: 300, reasoning: 0, cacheWrite5m: 400, cacheWrite1h: 200 };
    const answer = { candidate, completion: { ...completion, usage: cachedUsage }, usage: cachedUsage, meta: null };
    expect(anthropicMessagesIngress.render(ctx(), answer).usage).toEqual({
      input_tokens: 100,
      output_tokens: 5,
      cache_read_input_tokens: 300,
      cache_creation_input_tokens: 600,
      cache_creation: { ephemeral_5m_input_tokens: 400, ephemeral_1h_input_tokens: 200 },
    });
    expect(responsesIngress.render(ctx({ store: false }), answer).usage).toMatchObject({ input_tokens: 1000, input_tokens_details: { cached_tokens: 300 } });
    expect(usageBody(cachedUsage)).toMatchObject({ prompt_tokens: 1000, prompt_tokens_details: { cached_tokens: 300, cache_write_tokens: 600 } });
  });

  it("errors in each format's shape", () => {
    const e = { status: 400, code: "invalid_request", message: "messages.0.role: bad", details: { field: "messages.0.role" } };
    expect(anthropicMessagesIngress.errorBody(e)).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message: "messages.0.role: bad", code: "invalid_request", details: { field: "messages.0.role" } },
    });
    expect(responsesIngress.errorBody(e)).toEqual({ error: { ...e, type: "invalid_request_error", param: "messages.0.role" } });
  });
});

describe("the stream renderers", () => {
  const fakeSse = () => {
    const events: Array<{ event: string; data: Record<string, unknown> }> = [];
    const sse = { event: (event: string, json: string) => events.push({ event, data: JSON.parse(json) as Record<string, unknown> }), end: () => undefined };
    return { events, sse: sse as unknown as SseResponse };
  };
  const chunks = [
    { reasoning: "th" },
    { reasoning: "ink", reasoning_details: [{ type: "reasoning.text" as const, text: "", signature: "sig", format: "anthropic-claude-v1", index: 0 }] },
    { content: "He" },
    { content: "llo" },
    { tool_calls: [{ index: 0, id: "c1", type: "function" as const, function: { name: "w", arguments: "" } }] },
    { tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] },
  ];
  const end = { candidate, usage, finishReason: "tool_calls" as const, nativeFinishReason: "tool_use", meta: null };

  it("Anthropic: message_start, three blocks with their deltas (signature included), message_delta, message_stop", () => {
    const { events, sse } = fakeSse();
    const out = anthropicMessagesIngress.stream(ctx(), sse);
    out.commit(candidate);
    for (const delta of chunks) out.chunk([{ index: 0, delta, finish_reason: null, native_finish_reason: null }]);
    out.end(end);
    expect(events.map((e) => e.event)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(events[4]?.data).toMatchObject({ index: 0, delta: { type: "signature_delta", signature: "sig" } });
    expect(events[10]?.data).toMatchObject({ index: 2, content_block: { type: "tool_use", id: "c1", name: "w" } });
    expect(events[13]?.data).toMatchObject({ delta: { stop_reason: "tool_use" }, usage: { input_tokens: 6, output_tokens: 5 } });
  });

  it("Responses: created, items with deltas and done events, completed with the output and usage; sequence numbers count up", () => {
    const { events, sse } = fakeSse();
    const out = responsesIngress.stream(ctx(), sse);
    out.commit(candidate);
    for (const delta of chunks) out.chunk([{ index: 0, delta, finish_reason: null, native_finish_reason: null }]);
    out.end(end);
    const types = events.map((e) => e.event);
    expect(types.slice(0, 3)).toEqual(["response.created", "response.in_progress", "response.output_item.added"]);
    expect(types).toContain("response.output_text.delta");
    expect(types).toContain("response.function_call_arguments.done");
    expect(types.at(-1)).toBe("response.completed");
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.find((e) => e.event === "response.output_text.done")?.data).toMatchObject({ text: "Hello" });
    const response = events.at(-1)?.data.response as { output: Array<{ type: string }>; usage: unknown };
    expect(response.output.map((o) => o.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(response.usage).toMatchObject({ input_tokens: 10, output_tokens: 5 });
    // The reasoning item is done with its signature in encrypted_content, as a whole answer has it.
    const reasoningItem = (type: string) => events.find((e) => e.event === type && (e.data.item as { type: string }).type === "reasoning")?.data.item as Record<string, unknown>;
    expect(reasoningItem("response.output_item.added")).not.toHaveProperty("encrypted_content");
    const done = reasoningItem("response.output_item.done");
    expect(reasoningDetailOf(done.encrypted_content as string)).toEqual({ type: "reasoning.text", text: "think", signature: "sig", format: "anthropic-claude-v1" });
    expect(response.output[0]).toEqual(done);
  });

  it("a failure before any provider answered: Responses created then failed; Anthropic an error event", () => {
    const error = new DomainError("upstream_error", "every provider failed", { status: 502 });
    const r = fakeSse();
    responsesIngress.stream(ctx(), r.sse).fail({ error, candidate: null, usage: null, meta: null });
    expect(r.events.map((e) => e.event)).toEqual(["response.created", "response.in_progress", "response.failed"]);
    expect(r.events[2]?.data).toMatchObject({ response: { status: "failed", error: { code: "upstream_error", message: "every provider failed" } } });
    const a = fakeSse();
    anthropicMessagesIngress.stream(ctx(), a.sse).fail({ error, candidate: null, usage: null, meta: null });
    expect(a.events).toEqual([{ event: "error", data: { type: "error", error: { type: "api_error", message: "every provider failed", code: "upstream_error" } } }]);
  });
});

describe("output blocks", () => {
  it("orders a whole answer's signed and redacted reasoning by index, then text, then tool calls", () => {
    expect(
      blocksOf({
        role: "assistant",
        content: "x",
        reasoning_details: [
          { type: "reasoning.encrypted", data: "enc", index: 1 },
          { type: "reasoning.text", text: "t", signature: "s", index: 0 },
        ],
      }),
    ).toEqual([
      { kind: "reasoning", text: "t", signature: "s", format: null },
      { kind: "redacted", data: "enc", format: null },
      { kind: "text", text: "x" },
    ]);
  });

  it("opens a new block for each tool call of a stream", () => {
    const seen: string[] = [];
    const sink: BlockSink = {
      open: (i, b) => seen.push(`open ${i} ${b.kind}`),
      delta: (i, _k, t) => seen.push(`delta ${i} ${t}`),
      signature: () => undefined,
      close: (i) => seen.push(`close ${i}`),
    };
    const blocks = new StreamBlocks(sink);
    blocks.feed([{ index: 0, finish_reason: null, native_finish_reason: null, delta: { tool_calls: [{ index: 0, id: "a", function: { name: "f", arguments: "{}" } }, { index: 1, id: "b", function: { name: "g", arguments: "{}" } }] } }]);
    blocks.finish();
    expect(seen).toEqual(["open 0 tool_call", "delta 0 {}", "close 0", "open 1 tool_call", "delta 1 {}", "close 1"]);
  });
});
