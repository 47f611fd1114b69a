import { adapterFor } from "../../src/providers/registry";
import { SUPPORTED_PROVIDERS } from "../../src/providers/supported";
import { bodyOf, chat, collect, decodeStream, sample, sampleJson, target } from "./wire-samples";

const openai = adapterFor("openai", "openai")!;

describe("OpenAI-compatible request", () => {
  it("sends the messages as given with the endpoint's model and the key as a bearer token", () => {
    const req = openai.buildRequest(
      chat({ messages: [{ role: "system", content: "Be brief." }, { role: "user", content: [{ type: "text", text: "Hi" }] }] }),
      target({ baseUrl: "https://api.openai.com/v1/" }),
      false,
    );
    expect(req.url.toString()).toBe("https://api.openai.com/v1/chat/completions");
    expect(req.headers.authorization).toBe("Bearer sk-test-123");
    const body = bodyOf(req);
    expect(body.model).toBe("model-upstream");
    expect(body.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: [{ type: "text", text: "Hi" }] },
    ]);
    expect(body.stream).toBeUndefined();
  });

  it("asks for usage on streams", () => {
    const body = bodyOf(openai.buildRequest(chat({ stream: true }), target(), true));
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true });
  });

  it("honours every sampling and tool field", () => {
    const tools = [{ type: "function", function: { name: "get_weather", description: "d", parameters: { type: "object", properties: {} } } }];
    const body = bodyOf(
      openai.buildRequest(
        chat({
          max_tokens: 100,
          temperature: 0.3,
          top_p: 0.9,
          stop: ["END"],
          seed: 7,
          tools,
          tool_choice: { type: "function", function: { name: "get_weather" } },
          parallel_tool_calls: false,
          response_format: { type: "json_object" },
          frequency_penalty: 0.5,
          presence_penalty: -0.5,
          reasoning: { effort: "high" },
          user: "u-1",
          prompt_cache_key: "conv-1",
        }),
        target(),
        false,
      ),
    );
    expect(body).toMatchObject({
      max_completion_tokens: 100,
      temperature: 0.3,
      top_p: 0.9,
      stop: ["END"],
      seed: 7,
      tools,
      tool_choice: { type: "function", function: { name: "get_weather" } },
      parallel_tool_calls: false,
      response_format: { type: "json_object" },
      frequency_penalty: 0.5,
      presence_penalty: -0.5,
      reasoning_effort: "high",
      user: "u-1",
      prompt_cache_key: "conv-1",
    });
    expect(body.max_tokens).toBeUndefined();
  });

  it("drops fields a provider would refuse and renames the seed for Mistral", () => {
    const mistral = bodyOf(adapterFor("openai", "mistral")!.buildRequest(chat({ seed: 3, top_k: 5, user: "u", max_tokens: 9 }), target(), false));
    expect(mistral.random_seed).toBe(3);
    expect(mistral.seed).toBeUndefined();
    expect(mistral.top_k).toBeUndefined();
    expect(mistral.user).toBeUndefined();
    expect(mistral.max_tokens).toBe(9);
    const together = bodyOf(adapterFor("openai", "together")!.buildRequest(chat({ top_k: 5 }), target(), false));
    expect(together.top_k).toBe(5);
  });

  it("turns a legacy prompt into one user message", () => {
    const req = openai.buildRequest(chat({ messages: undefined, prompt: "Tell me a joke" }), target(), false);
    expect(bodyOf(req).messages).toEqual([{ role: "user", content: "Tell me a joke" }]);
  });

  it("never forwards X-Vendor-Beta to an OpenAI-compatible provider", () => {
    const req = openai.buildRequest(chat({}), target({ vendorBeta: "prompt-caching-2024-07-31" }), false);
    expect(Object.keys(req.headers)).not.toContain("anthropic-beta");
    expect(JSON.stringify(req.headers)).not.toContain("prompt-caching");
  });
});

describe("OpenAI-compatible response", () => {
  it("normalizes a completion with cached prompt tokens", () => {
    const c = openai.parseCompletion(sampleJson("openai-completion.json"));
    expect(c.choices[0]).toMatchObject({
      message: { role: "assistant", content: expect.stringContaining("wooden boardwalk") },
      finish_reason: "stop",
      native_finish_reason: "stop",
    });
    expect(c.usage).toEqual({ prompt: 1117, completion: 46, cached: 1024, reasoning: 0 });
  });

  it("keeps tool calls and their finish reason", () => {
    const c = openai.parseCompletion(sampleJson("openai-tool-calls.json"));
    expect(c.choices[0]?.finish_reason).toBe("tool_calls");
    expect(c.choices[0]?.message.content).toBeNull();
    expect(c.choices[0]?.message.tool_calls).toEqual([
      { id: "call_abc123", type: "function", function: { name: "get_current_weather", arguments: '{\n"location": "Boston, MA"\n}' } },
    ]);
  });

  it("returns DeepSeek's reasoning_content as reasoning with reasoning tokens", () => {
    const c = adapterFor("openai", "deepseek")!.parseCompletion(sampleJson("deepseek-reasoner.json"));
    expect(c.choices[0]?.message.reasoning).toBe("Compare the tenths: 1 is less than 8.");
    expect(c.usage?.reasoning).toBe(340);
  });

  it("reads the provider's error code and words", () => {
    expect(openai.parseError(sample("openai-error-429.json"))).toEqual({
      code: "rate_limit_exceeded",
      message: expect.stringContaining("Rate limit reached"),
    });
    expect(openai.parseError("upstream connect error")).toEqual({ code: null, message: "upstream connect error" });
  });
});

describe("OpenAI-compatible stream", () => {
  it("passes content chunks and marks the role chunk as no content", async () => {
    const events = await decodeStream(openai, sample("openai-stream.sse"));
    const chunks = events.filter((e) => e.type === "chunk");
    expect(chunks.map((c) => c.type === "chunk" && c.content)).toEqual([false, true, true, false]);
    const got = collect(events);
    expect(got.content).toBe("Hello there!");
    expect(got.finishes).toEqual([{ finish: "stop", native: "stop" }]);
    expect(got.usage).toEqual({ prompt: 9, completion: 3, cached: 0, reasoning: 0 });
    expect(events[events.length - 1]).toEqual({ type: "done" });
  });

  it("streams tool-call arguments by index", async () => {
    const got = collect(await decodeStream(openai, sample("openai-stream-tools.sse"), 11));
    expect(got.tools[0]).toEqual({ id: "call_DdmO9pD3xa9XTPNJ32zg2hcA", name: "get_weather", arguments: '{"location":"Paris"}' });
    expect(got.finishes[0]?.finish).toBe("tool_calls");
  });

  it("reads Groq's usage from x_groq", async () => {
    const got = collect(await decodeStream(adapterFor("openai", "groq")!, sample("groq-stream-usage.sse")));
    expect(got.usage).toEqual({ prompt: 40, completion: 2, cached: 0, reasoning: 0 });
  });

  it("turns an error object inside the stream into an error event", async () => {
    const events = await decodeStream(openai, 'data: {"error":{"message":"boom","type":"server_error","code":"server_error"}}\n\n');
    expect(events).toEqual([{ type: "error", code: "server_error", message: "boom" }]);
  });
});

describe("adapter registry", () => {
  it("has an adapter for every supported provider slug", () => {
    for (const slug of SUPPORTED_PROVIDERS) expect(adapterFor("", slug)).not.toBeNull();
  });

  it("prefers the catalog's api_family and refuses an unknown family", () => {
    expect(adapterFor("anthropic", "some-host")?.family).toBe("anthropic");
    expect(adapterFor("", "unknown-provider")).toBeNull();
  });
});
