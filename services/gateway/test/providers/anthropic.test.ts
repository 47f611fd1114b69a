import { startFakeAnthropic, type FakeUpstream } from "@router/testkit";
import { DomainError } from "@router/errors";
import { parseChatRequest } from "@router/chat-request";
import { adapterFor } from "@router/providers";
import { UnsupportedRequest, type StreamEvent } from "@router/providers";
import { bodyOf, chat, collect, decodeStream, sample, sampleJson, target } from "./wire-samples";

const anthropic = adapterFor("anthropic", "anthropic")!;
const anthropicTarget = (o = {}) => target({ providerSlug: "anthropic", baseUrl: "https://api.anthropic.com/v1", ...o });

describe("Anthropic request (OpenAI → Messages)", () => {
  it("moves system and developer messages to `system` and sends the key and version headers", () => {
    const req = anthropic.buildRequest(
      chat({
        messages: [
          { role: "system", content: "You are terse." },
          { role: "developer", content: [{ type: "text", text: "Answer in French." }] },
          { role: "user", content: "Hi" },
        ],
      }),
      anthropicTarget(),
      false,
    );
    expect(req.url.toString()).toBe("https://api.anthropic.com/v1/messages");
    expect(req.headers["x-api-key"]).toBe("sk-test-123");
    expect(req.headers["anthropic-version"]).toBe("2023-06-01");
    expect(req.headers.authorization).toBeUndefined();
    const body = bodyOf(req);
    expect(body.system).toBe("You are terse.\n\nAnswer in French.");
    expect(body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Hi" }] }]);
  });

  it("accepts a base URL without the version segment", () => {
    expect(anthropic.buildRequest(chat({}), anthropicTarget({ baseUrl: "http://127.0.0.1:9999" }), true).url.toString()).toBe(
      "http://127.0.0.1:9999/v1/messages",
    );
  });

  it("defaults max_tokens to the endpoint's max output, else 4096", () => {
    expect(bodyOf(anthropic.buildRequest(chat({}), anthropicTarget({ maxOutputTokens: 64000 }), false)).max_tokens).toBe(64000);
    expect(bodyOf(anthropic.buildRequest(chat({}), anthropicTarget({ maxOutputTokens: 0 }), false)).max_tokens).toBe(4096);
    expect(bodyOf(anthropic.buildRequest(chat({ max_completion_tokens: 300 }), anthropicTarget(), false)).max_tokens).toBe(300);
  });

  it("maps tools, tool choice, tool calls and tool results", () => {
    const body = bodyOf(
      anthropic.buildRequest(
        chat({
          messages: [
            { role: "user", content: "Weather in Paris?" },
            {
              role: "assistant",
              content: null,
              tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
            },
            { role: "tool", tool_call_id: "call_1", content: '{"temp":21}' },
            { role: "user", content: "Thanks" },
          ],
          tools: [{ type: "function", function: { name: "get_weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }],
          tool_choice: "required",
          parallel_tool_calls: false,
        }),
        anthropicTarget(),
        false,
      ),
    );
    expect(body.tools).toEqual([
      { name: "get_weather", description: "Weather", input_schema: { type: "object", properties: { city: { type: "string" } } } },
    ]);
    expect(body.tool_choice).toEqual({ type: "any", disable_parallel_tool_use: true });
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } }] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "call_1", content: '{"temp":21}' },
          { type: "text", text: "Thanks" },
        ],
      },
    ]);
  });

  it("maps a named tool choice and none", () => {
    const tools = [{ type: "function", function: { name: "f" } }];
    expect(bodyOf(anthropic.buildRequest(chat({ tools, tool_choice: { type: "function", function: { name: "f" } } }), anthropicTarget(), false)).tool_choice).toEqual({
      type: "tool",
      name: "f",
    });
    expect(bodyOf(anthropic.buildRequest(chat({ tools, tool_choice: "none" }), anthropicTarget(), false)).tool_choice).toEqual({ type: "none" });
  });

  it("sends data-URL images as base64 and https images as URLs", () => {
    const body = bodyOf(
      anthropic.buildRequest(
        chat({
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: "What is in these?" },
                { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
                { type: "image_url", image_url: { url: "https://example.com/cat.jpg" } },
              ],
            },
          ],
        }),
        anthropicTarget(),
        false,
      ),
    );
    expect(body.messages[0].content).toEqual([
      { type: "text", text: "What is in these?" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
      { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
    ]);
  });

  it("maps stop, sampling and user; clamps temperature to Anthropic's range; drops the seed", () => {
    const body = bodyOf(anthropic.buildRequest(chat({ stop: "###", temperature: 1.7, top_p: 0.8, top_k: 40, seed: 5, user: "u-9" }), anthropicTarget(), false));
    expect(body).toMatchObject({ stop_sequences: ["###"], temperature: 1, top_p: 0.8, top_k: 40, metadata: { user_id: "u-9" } });
    expect(body.seed).toBeUndefined();
  });

  it("turns reasoning into a thinking budget with a floor of 1024 and drops sampling fields", () => {
    const small = bodyOf(anthropic.buildRequest(chat({ reasoning: { max_tokens: 200 }, max_tokens: 2000, temperature: 0.5, top_p: 0.5, top_k: 3 }), anthropicTarget(), false));
    expect(small.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
    expect(small.max_tokens).toBe(2000);
    expect(small.temperature).toBeUndefined();
    expect(small.top_p).toBeUndefined();
    expect(small.top_k).toBeUndefined();

    const effort = bodyOf(anthropic.buildRequest(chat({ reasoning: { effort: "high" }, max_tokens: 10000 }), anthropicTarget(), false));
    expect(effort.thinking).toEqual({ type: "enabled", budget_tokens: 8000 });

    // The budget is part of max_tokens: the answer keeps the room the caller asked for.
    const tight = bodyOf(anthropic.buildRequest(chat({ reasoning: { effort: "low" }, max_tokens: 500 }), anthropicTarget(), false));
    expect(tight.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
    expect(tight.max_tokens).toBe(1524);
  });

  it("forwards X-Vendor-Beta as anthropic-beta", () => {
    const req = anthropic.buildRequest(chat({}), anthropicTarget({ vendorBeta: "interleaved-thinking-2025-05-14" }), false);
    expect(req.headers["anthropic-beta"]).toBe("interleaved-thinking-2025-05-14");
  });

  it("asks for JSON through the system prompt when a response format is set", () => {
    const body = bodyOf(
      anthropic.buildRequest(
        chat({ response_format: { type: "json_schema", json_schema: { name: "r", schema: { type: "object", properties: { a: { type: "number" } } } } } }),
        anthropicTarget(),
        false,
      ),
    );
    expect(body.system).toContain("JSON");
    expect(body.system).toContain('"properties":{"a":{"type":"number"}}');
  });

  it("refuses tool-call arguments that are not an object, naming the field", () => {
    const req = chat({
      messages: [
        { role: "user", content: "x" },
        { role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "[1,2]" } }] },
      ],
    });
    expect(() => anthropic.buildRequest(req, anthropicTarget(), false)).toThrow(UnsupportedRequest);
    expect(() => anthropic.buildRequest(req, anthropicTarget(), false)).toThrow("messages.1.tool_calls.0.function.arguments");
  });
});

describe("Anthropic response", () => {
  it("returns thinking as reasoning and counts cache reads in the prompt", () => {
    const c = anthropic.parseCompletion(sampleJson("anthropic-message.json"));
    expect(c.choices[0]).toEqual({
      index: 0,
      message: {
        role: "assistant",
        content: "Hello! How can I help you today?",
        reasoning: "The user wants a greeting. Keep it short.",
        reasoning_details: [
          {
            type: "reasoning.text",
            text: "The user wants a greeting. Keep it short.",
            signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds...",
            format: "anthropic-claude-v1",
            index: 0,
          },
        ],
      },
      finish_reason: "stop",
      native_finish_reason: "end_turn",
    });
    expect(c.usage).toEqual({ prompt: 2060, completion: 94, cached: 2048, reasoning: 0 });
  });

  it("turns tool_use blocks into tool calls", () => {
    const c = anthropic.parseCompletion(sampleJson("anthropic-tool-use.json"));
    expect(c.choices[0]?.finish_reason).toBe("tool_calls");
    expect(c.choices[0]?.native_finish_reason).toBe("tool_use");
    expect(c.choices[0]?.message.tool_calls).toEqual([
      { id: "toolu_01A09q90qw90lq917835lq9", type: "function", function: { name: "get_weather", arguments: '{"location":"San Francisco, CA","unit":"celsius"}' } },
    ]);
  });

  it.each([
    ["end_turn", "stop"],
    ["stop_sequence", "stop"],
    ["max_tokens", "length"],
    ["tool_use", "tool_calls"],
    ["refusal", "content_filter"],
  ])("maps stop reason %s to %s", (native, normalized) => {
    const c = anthropic.parseCompletion({ type: "message", content: [{ type: "text", text: "x" }], stop_reason: native, usage: { input_tokens: 1, output_tokens: 1 } });
    expect(c.choices[0]?.finish_reason).toBe(normalized);
    expect(c.choices[0]?.native_finish_reason).toBe(native);
  });

  it("reads the error type as the provider's code", () => {
    expect(anthropic.parseError(sample("anthropic-error-529.json"))).toEqual({ code: "overloaded_error", message: "Overloaded" });
  });

  const answer = (usage: Record<string, unknown>) =>
    anthropic.parseCompletion({ type: "message", content: [{ type: "text", text: "x" }], stop_reason: "end_turn", usage });

  it("counts cache writes by TTL as prompt tokens apart from reads (input_tokens excludes both)", () => {
    const c = answer({
      input_tokens: 20,
      cache_read_input_tokens: 1000,
      cache_creation_input_tokens: 3000,
      cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 },
      output_tokens: 10,
    });
    expect(c.usage).toEqual({ prompt: 4020, completion: 10, cached: 1000, reasoning: 0, cacheWrite5m: 1000, cacheWrite1h: 2000 });
  });

  it("counts a write total without a breakdown as five-minute writes", () => {
    expect(answer({ input_tokens: 5, cache_creation_input_tokens: 700, output_tokens: 1 }).usage).toEqual({
      prompt: 705,
      completion: 1,
      cached: 0,
      reasoning: 0,
      cacheWrite5m: 700,
    });
  });
});

describe("Anthropic stream", () => {
  it("turns thinking, text and tool_use blocks into chunks with usage and the stop reason", async () => {
    const events = await decodeStream(anthropic, sample("anthropic-stream.sse"), 13);
    const got = collect(events);
    expect(got.reasoning).toBe("Let me look up the weather.");
    expect(got.content).toBe("Okay, let's check the weather for San Francisco, CA:");
    expect(got.tools[0]).toEqual({ id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "get_weather", arguments: '{"location": "San Francisco, CA"}' });
    expect(got.finishes).toEqual([{ finish: "tool_calls", native: "tool_use" }]);
    expect(got.usage).toEqual({ prompt: 572, completion: 89, cached: 100, reasoning: 0 });
    expect(events[events.length - 1]).toEqual({ type: "done" });
    const first = events.find((e) => e.type === "chunk");
    expect(first).toMatchObject({ content: false, choices: [{ delta: { role: "assistant" } }] });
  });

  it("keeps message_start's cache writes when message_delta repeats only some counts", async () => {
    const sse = [
      'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":1500,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":1500},"output_tokens":1}}}',
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}',
      'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}',
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":3,"output_tokens":9}}',
      'event: message_stop\ndata: {"type":"message_stop"}',
    ].join("\n\n") + "\n\n";
    const got = collect(await decodeStream(anthropic, sse));
    expect(got.usage).toEqual({ prompt: 1503, completion: 9, cached: 0, reasoning: 0, cacheWrite1h: 1500 });
  });

  it("turns an error event into a stream error", async () => {
    const events = await decodeStream(anthropic, sample("anthropic-stream-overloaded.sse"));
    expect(events[events.length - 1]).toEqual({ type: "error", code: "overloaded_error", message: "Overloaded" });
  });
});

/** Every `reasoning_details` entry of the decoded chunks, in order. */
const streamedDetails = (events: StreamEvent[]) =>
  events.flatMap((e) => (e.type === "chunk" ? e.choices.flatMap((c) => c.delta.reasoning_details ?? []) : []));

/** The signature of the thinking block in fixtures/anthropic-stream.sse. */
const STREAM_SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds";
const REDACTED_DATA =
  "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pabfgvOwcaBpkvcf/KpnmgH0";

// A recorded answer with a redacted thinking block between two thinking blocks, then a tool call.
const redactedToolUseMessage = {
  id: "msg_01Qv3bBp4nB4pTkAVwk3MLTi",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-20250514",
  content: [
    { type: "thinking", thinking: "The user asks for the weather.", signature: "ErUBCkYIBhgCIkDyLXhVGwEkr2VvU1Y5mE3cuqGQk" },
    { type: "redacted_thinking", data: REDACTED_DATA },
    { type: "thinking", thinking: "I should call get_weather.", signature: "EqgBCkYIBhgCIkBzB9R1nK0Ie4yWq8vBnO2Dk4b9M" },
    { type: "tool_use", id: "toolu_01D7FLrfh4GYq7yT1ULFeyMV", name: "get_weather", input: { location: "Paris" } },
  ],
  stop_reason: "tool_use",
  stop_sequence: null,
  usage: { input_tokens: 412, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 180 },
};

// A recorded stream in which the model's thinking starts with a redacted block.
const redactedStream = [
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_01RZsXm2n4yUfGAhhrBiUw7Y","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":39,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":4}}}',
  `event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"${REDACTED_DATA}"}}`,
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}',
  'event: content_block_start\ndata: {"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":"","signature":""}}',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"Short answer"}}',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":" is best."}}',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"EuYBCkQYAiJAgCs1le6/Pol5Z4ZJ"}}',
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":1}',
  'event: content_block_start\ndata: {"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Yes."}}',
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":2}',
  'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":61}}',
  'event: message_stop\ndata: {"type":"message_stop"}',
]
  .map((event) => `${event}\n\n`)
  .join("");

const weatherTool = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { location: { type: "string" } } } } }];
const weatherCall = { id: "toolu_01D7FLrfh4GYq7yT1ULFeyMV", type: "function", function: { name: "get_weather", arguments: '{"location":"Paris"}' } };

/** A conversation in which the assistant called get_weather, echoing `details`, and the tool answered. */
function afterToolCall(details?: unknown[]): Record<string, unknown>[] {
  return [
    { role: "user", content: "Weather in Paris?" },
    { role: "assistant", content: "Let me check.", tool_calls: [weatherCall], ...(details ? { reasoning_details: details } : {}) },
    { role: "tool", tool_call_id: weatherCall.id, content: '{"temp":21}' },
  ];
}

const signedThinking = (text: string, signature: string, index: number) => ({ type: "reasoning.text", text, signature, format: "anthropic-claude-v1", index });

describe("Anthropic reasoning_details out", () => {
  it("returns each thinking block with its signature and each redacted block with its data, in order", () => {
    const c = anthropic.parseCompletion(redactedToolUseMessage);
    expect(c.choices[0]?.message.reasoning).toBe("The user asks for the weather.I should call get_weather.");
    expect(c.choices[0]?.message.reasoning_details).toEqual([
      signedThinking("The user asks for the weather.", "ErUBCkYIBhgCIkDyLXhVGwEkr2VvU1Y5mE3cuqGQk", 0),
      { type: "reasoning.encrypted", data: REDACTED_DATA, format: "anthropic-claude-v1", index: 1 },
      signedThinking("I should call get_weather.", "EqgBCkYIBhgCIkBzB9R1nK0Ie4yWq8vBnO2Dk4b9M", 2),
    ]);
  });

  it("has no reasoning_details when the answer has no thinking", () => {
    const c = anthropic.parseCompletion(sampleJson("anthropic-tool-use.json"));
    expect(c.choices[0]?.message).not.toHaveProperty("reasoning_details");
  });

  it("streams thinking text as reasoning.text pieces, then the signature alone with empty text", async () => {
    const events = await decodeStream(anthropic, sample("anthropic-stream.sse"), 11);
    expect(streamedDetails(events)).toEqual([
      { type: "reasoning.text", text: "Let me look up the weather.", signature: null, format: "anthropic-claude-v1", index: 0 },
      { type: "reasoning.text", text: "", signature: STREAM_SIGNATURE, format: "anthropic-claude-v1", index: 0 },
    ]);
    const signatureChunk = events.find((e) => e.type === "chunk" && e.choices[0]?.delta.reasoning_details?.[0]?.type === "reasoning.text" && !e.choices[0].delta.reasoning);
    expect(signatureChunk).toEqual({
      type: "chunk",
      content: true,
      choices: [
        {
          index: 0,
          delta: { reasoning_details: [{ type: "reasoning.text", text: "", signature: STREAM_SIGNATURE, format: "anthropic-claude-v1", index: 0 }] },
          finish_reason: null,
          native_finish_reason: null,
        },
      ],
    });
  });

  it("streams a redacted block whole as reasoning.encrypted and counts it in the detail indexes", async () => {
    const events = await decodeStream(anthropic, redactedStream, 13);
    expect(streamedDetails(events)).toEqual([
      { type: "reasoning.encrypted", data: REDACTED_DATA, format: "anthropic-claude-v1", index: 0 },
      { type: "reasoning.text", text: "Short answer", signature: null, format: "anthropic-claude-v1", index: 1 },
      { type: "reasoning.text", text: " is best.", signature: null, format: "anthropic-claude-v1", index: 1 },
      { type: "reasoning.text", text: "", signature: "EuYBCkQYAiJAgCs1le6/Pol5Z4ZJ", format: "anthropic-claude-v1", index: 1 },
    ]);
    const got = collect(events);
    expect(got.reasoning).toBe("Short answer is best.");
    expect(got.content).toBe("Yes.");
  });
});

describe("Anthropic reasoning_details in", () => {
  const thinkingOn = { reasoning: { max_tokens: 2000 }, max_tokens: 4000, tools: weatherTool };

  it("starts the assistant turn with the echoed thinking and redacted blocks, in order, when thinking is on", () => {
    const details = anthropic.parseCompletion(redactedToolUseMessage).choices[0]?.message.reasoning_details;
    const body = bodyOf(anthropic.buildRequest(chat({ ...thinkingOn, messages: afterToolCall(details) }), anthropicTarget(), false));
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 2000 });
    expect(body.messages[1]).toEqual({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "The user asks for the weather.", signature: "ErUBCkYIBhgCIkDyLXhVGwEkr2VvU1Y5mE3cuqGQk" },
        { type: "redacted_thinking", data: REDACTED_DATA },
        { type: "thinking", thinking: "I should call get_weather.", signature: "EqgBCkYIBhgCIkBzB9R1nK0Ie4yWq8vBnO2Dk4b9M" },
        { type: "text", text: "Let me check." },
        { type: "tool_use", id: weatherCall.id, name: "get_weather", input: { location: "Paris" } },
      ],
    });
  });

  it("joins streamed pieces into one signed block, and leaves out unsigned thinking and other formats", async () => {
    const streamed = streamedDetails(await decodeStream(anthropic, sample("anthropic-stream.sse")));
    const details = [
      { type: "reasoning.text", text: "From another model.", signature: "sig-of-another-vendor", format: "openai-responses-v1", index: 0 },
      { type: "reasoning.summary", summary: "Checked the weather.", format: "anthropic-claude-v1", index: 0 },
      { type: "reasoning.future", payload: { anything: true } },
      ...streamed,
      { type: "reasoning.text", text: "Cut off before its signature.", signature: null, format: "anthropic-claude-v1", index: 1 },
    ];
    const body = bodyOf(anthropic.buildRequest(chat({ ...thinkingOn, messages: afterToolCall(details) }), anthropicTarget(), false));
    expect(body.messages[1].content).toEqual([
      { type: "thinking", thinking: "Let me look up the weather.", signature: STREAM_SIGNATURE },
      { type: "text", text: "Let me check." },
      { type: "tool_use", id: weatherCall.id, name: "get_weather", input: { location: "Paris" } },
    ]);
  });

  it("sends no thinking blocks from history when the request does not think", () => {
    const details = [signedThinking("The user asks for the weather.", "ErUBCkYIBhgCIkDyLXhVGwEkr2VvU1Y5mE3cuqGQk", 0)];
    const body = bodyOf(anthropic.buildRequest(chat({ tools: weatherTool, messages: afterToolCall(details) }), anthropicTarget(), false));
    expect(body.thinking).toBeUndefined();
    expect(body.messages[1].content).toEqual([
      { type: "text", text: "Let me check." },
      { type: "tool_use", id: weatherCall.id, name: "get_weather", input: { location: "Paris" } },
    ]);
  });

  it("asks without thinking, sampling kept, when the last tool-calling turn has no signed thinking", () => {
    const unsigned = [{ type: "reasoning.text", text: "Unsigned.", signature: null, format: "anthropic-claude-v1", index: 0 }];
    const messages = [
      { role: "user", content: "Hi" },
      // An earlier turn's signed thinking is not sent either: the request no longer thinks.
      { role: "assistant", content: "Hello.", reasoning_details: [signedThinking("Greet back.", "EpABCkYIBhgC", 0)] },
      ...afterToolCall(unsigned),
    ];
    const body = bodyOf(
      anthropic.buildRequest(chat({ ...thinkingOn, messages, temperature: 0.4, top_p: 0.9, top_k: 20 }), anthropicTarget(), false),
    );
    expect(body.thinking).toBeUndefined();
    expect(body).toMatchObject({ max_tokens: 4000, temperature: 0.4, top_p: 0.9, top_k: 20 });
    expect(body.messages[1]).toEqual({ role: "assistant", content: [{ type: "text", text: "Hello." }] });
    expect(body.messages[3].content).toEqual([
      { type: "text", text: "Let me check." },
      { type: "tool_use", id: weatherCall.id, name: "get_weather", input: { location: "Paris" } },
    ]);
  });

  it("keeps thinking when the last assistant turn called no tool, even if an earlier one lacks thinking", () => {
    const messages = [...afterToolCall(), { role: "assistant", content: "It is 21 degrees." }, { role: "user", content: "Thanks" }];
    const body = bodyOf(anthropic.buildRequest(chat({ ...thinkingOn, messages }), anthropicTarget(), false));
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 2000 });
  });
});

describe("Anthropic max_tokens with a thinking budget", () => {
  it("caps max_tokens at the endpoint's max output and shrinks the budget below it", () => {
    const body = bodyOf(anthropic.buildRequest(chat({ reasoning: { max_tokens: 32000 } }), anthropicTarget({ maxOutputTokens: 32000 }), false));
    expect(body.max_tokens).toBe(32000);
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 31999 });
  });

  it("caps budget plus requested tokens at the max output, keeping a budget that fits", () => {
    const body = bodyOf(anthropic.buildRequest(chat({ reasoning: { max_tokens: 6000 }, max_tokens: 4000 }), anthropicTarget({ maxOutputTokens: 8192 }), false));
    expect(body.max_tokens).toBe(8192);
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 6000 });
  });

  it("adds the budget uncapped when the max output is unknown", () => {
    const body = bodyOf(anthropic.buildRequest(chat({ reasoning: { max_tokens: 32000 } }), anthropicTarget({ maxOutputTokens: 0 }), false));
    expect(body.max_tokens).toBe(32000 + 4096);
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 32000 });
  });

  it("asks without thinking, sampling kept, when the max output leaves no room for 1024 thinking tokens", () => {
    const body = bodyOf(
      anthropic.buildRequest(chat({ reasoning: { effort: "high" }, temperature: 0.3 }), anthropicTarget({ maxOutputTokens: 1024 }), false),
    );
    expect(body.thinking).toBeUndefined();
    expect(body.max_tokens).toBe(1024);
    expect(body.temperature).toBe(0.3);
  });

  it("thinks with the 1024 floor when the max output leaves just room for it", () => {
    const body = bodyOf(anthropic.buildRequest(chat({ reasoning: { effort: "high" } }), anthropicTarget({ maxOutputTokens: 1025 }), false));
    expect(body.max_tokens).toBe(1025);
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
  });
});

describe("reasoning_details validation", () => {
  /** The field a refused body names, or null when it is accepted. */
  function refusedField(details: unknown): string | null {
    try {
      parseChatRequest({ model: "x/y", messages: afterToolCall().map((m, i) => (i === 1 ? { ...m, reasoning_details: details } : m)) });
      return null;
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      expect(err.status).toBe(400);
      return err.details?.field as string;
    }
  }

  it.each<[string, unknown, string]>([
    ["a type that is not a string", [{ type: 5 }], "messages.1.reasoning_details.0.type"],
    ["reasoning.text without text", [{ type: "reasoning.text", signature: "s" }], "messages.1.reasoning_details.0.text"],
    ["a signature that is not a string", [signedThinking("a", "s", 0), { type: "reasoning.text", text: "b", signature: 7 }], "messages.1.reasoning_details.1.signature"],
    ["reasoning.encrypted without data", [{ type: "reasoning.encrypted", format: "anthropic-claude-v1" }], "messages.1.reasoning_details.0.data"],
    ["a negative index", [{ type: "reasoning.encrypted", data: "x", index: -1 }], "messages.1.reasoning_details.0.index"],
    ["an entry that is not an object", ["thinking"], "messages.1.reasoning_details.0"],
    ["a value that is not an array", { type: "reasoning.text", text: "a" }, "messages.1.reasoning_details"],
    ["more than 64 entries", Array.from({ length: 65 }, (_, i) => signedThinking("a", "s", i)), "messages.1.reasoning_details"],
  ])("refuses %s, naming the field", (_what, details, field) => {
    expect(refusedField(details)).toBe(field);
  });

  it("accepts 64 entries and kinds it does not know", () => {
    expect(refusedField(Array.from({ length: 64 }, (_, i) => signedThinking("a", "s", i)))).toBeNull();
    expect(refusedField([{ type: "reasoning.future", format: "some-vendor-v2", blob: [1, 2] }])).toBeNull();
  });
});

describe("Anthropic reasoning round trip through the fake Messages API", () => {
  let fake: FakeUpstream;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  const fakeTarget = () => anthropicTarget({ baseUrl: fake.url, maxOutputTokens: 8192 });
  const send = async (req: { url: URL; headers: Record<string, string>; body: string }) => {
    const res = await fetch(req.url, { method: "POST", headers: req.headers, body: req.body });
    return { status: res.status, text: await res.text() };
  };
  const firstTurn = { reasoning: { effort: "medium" }, tools: weatherTool, messages: [{ role: "user", content: "Weather in Paris?" }] };
  const nextTurn = (assistant: Record<string, unknown>) => ({
    ...firstTurn,
    messages: [...firstTurn.messages, assistant, { role: "tool", tool_call_id: "toolu_7", content: '{"temp":21}' }],
  });
  const toolReply = { reasoning: "The user wants Paris weather, so I call the tool.", toolCalls: [{ id: "toolu_7", name: "get_weather", arguments: { location: "Paris" } }] };

  it("continues a tool call with the thinking echoed from a JSON answer", async () => {
    fake.script(toolReply, { text: "21 degrees." });
    const first = await send(anthropic.buildRequest(chat(firstTurn), fakeTarget(), false));
    const message = anthropic.parseCompletion(JSON.parse(first.text)).choices[0]!.message;

    const second = await send(anthropic.buildRequest(chat(nextTurn({ ...message })), fakeTarget(), false));
    expect(second.status).toBe(200);
    expect(JSON.parse(second.text).content).toEqual([{ type: "text", text: "21 degrees." }]);
    expect(fake.requests[1]?.body).toMatchObject({ thinking: { type: "enabled", budget_tokens: 4096 } });
  });

  it("continues a tool call with the thinking echoed from a stream", async () => {
    fake.script(toolReply, { text: "21 degrees." });
    const first = await send(anthropic.buildRequest(chat(firstTurn), fakeTarget(), true));
    const events = await decodeStream(anthropic, first.text);
    const got = collect(events);
    const assistant = {
      role: "assistant",
      content: got.content || null,
      tool_calls: [{ id: got.tools[0]?.id, type: "function", function: { name: got.tools[0]?.name, arguments: got.tools[0]?.arguments } }],
      reasoning_details: streamedDetails(events),
    };

    const second = await send(anthropic.buildRequest(chat(nextTurn(assistant)), fakeTarget(), false));
    expect(second.status).toBe(200);
    expect(fake.requests[1]?.body).toMatchObject({ thinking: { type: "enabled", budget_tokens: 4096 } });
  });

  it("is refused by the fake, as by Anthropic, for altered or missing thinking, a budget at max_tokens, no max_tokens", async () => {
    fake.script(toolReply);
    const first = await send(anthropic.buildRequest(chat(firstTurn), fakeTarget(), false));
    const message = anthropic.parseCompletion(JSON.parse(first.text)).choices[0]!.message;
    const body = bodyOf(anthropic.buildRequest(chat(nextTurn({ ...message })), fakeTarget(), false));
    const raw = (b: unknown) => send({ url: new URL(`${fake.url}/messages`), headers: { "x-api-key": "k", "anthropic-version": "2023-06-01" }, body: JSON.stringify(b) });

    const altered = structuredClone(body);
    altered.messages[1].content[0].thinking += " Or not.";
    expect(await raw(altered)).toEqual({
      status: 400,
      text: JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "messages.1.content.0: Invalid `signature` in `thinking` block" } }),
    });

    const missing = structuredClone(body);
    missing.messages[1].content.shift();
    const refused = await raw(missing);
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.text).error.message).toMatch(/^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`/);

    expect(await raw({ ...body, max_tokens: body.thinking.budget_tokens })).toEqual({
      status: 400,
      text: JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "`max_tokens` must be greater than `thinking.budget_tokens`" } }),
    });

    const { max_tokens: _dropped, ...noMax } = body;
    expect(await raw(noMax)).toEqual({
      status: 400,
      text: JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "max_tokens: Field required" } }),
    });
  });
});
