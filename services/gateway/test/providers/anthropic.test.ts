import { adapterFor } from "../../src/providers/registry";
import { UnsupportedRequest } from "../../src/providers/types";
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
    expect(() => anthropic.buildRequest(req, anthropicTarget(), false)).toThrow("messages[1].tool_calls[0].function.arguments");
  });
});

describe("Anthropic response", () => {
  it("returns thinking as reasoning and counts cache reads in the prompt", () => {
    const c = anthropic.parseCompletion(sampleJson("anthropic-message.json"));
    expect(c.choices[0]).toEqual({
      index: 0,
      message: { role: "assistant", content: "Hello! How can I help you today?", reasoning: "The user wants a greeting. Keep it short." },
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

  it("turns an error event into a stream error", async () => {
    const events = await decodeStream(anthropic, sample("anthropic-stream-overloaded.sse"));
    expect(events[events.length - 1]).toEqual({ type: "error", code: "overloaded_error", message: "Overloaded" });
  });
});
