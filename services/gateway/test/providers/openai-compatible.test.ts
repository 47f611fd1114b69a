import { normalizeOpenAiFinish } from "@router/providers";
import { adapterFor } from "@router/providers";
import { SUPPORTED_PROVIDERS } from "../../../../libs/providers/src/supported";
import { UnsupportedRequest } from "@router/providers";
import { bodyOf, chat, collect, decodeStream, sample, sampleJson, target, thrown } from "./wire-samples";

const openai = adapterFor("openai", "openai")!;
const mistral = adapterFor("openai", "mistral")!;
const compatible = (slug: string) => adapterFor("openai", slug)!;
/** Every OpenAI-compatible provider but OpenAI itself, and an unlisted self-hosted server. */
const NOT_OPENAI = ["mistral", "groq", "deepseek", "xai", "together", "fireworks", "vllm", "ollama", "my-llm-server"];
const stops = (n: number) => Array.from({ length: n }, (_, i) => `STOP${i}`);

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

  it.each(["openai", "groq", "deepseek", "xai", "together", "fireworks", "vllm", "ollama", "my-llm-server"])(
    "asks %s for usage on streams",
    (slug) => {
      const body = bodyOf(compatible(slug).buildRequest(chat({ stream: true }), target({ providerSlug: slug }), true));
      expect(body.stream).toBe(true);
      expect(body.stream_options).toEqual({ include_usage: true });
    },
  );

  it("never sends stream_options to Mistral, which refuses unknown fields", () => {
    const body = bodyOf(mistral.buildRequest(chat({ stream: true }), target({ providerSlug: "mistral" }), true));
    expect(body.stream).toBe(true);
    expect(body).not.toHaveProperty("stream_options");
  });

  it("keeps the developer role for OpenAI", () => {
    const body = bodyOf(openai.buildRequest(chat({ messages: [{ role: "developer", content: "Terse." }, { role: "user", content: "Hi" }] }), target(), false));
    expect(body.messages[0]).toEqual({ role: "developer", content: "Terse." });
  });

  it.each(NOT_OPENAI)("sends a developer message to %s as a system message", (slug) => {
    const req = chat({ messages: [{ role: "developer", content: "Terse." }, { role: "user", content: "Hi" }] });
    const body = bodyOf(compatible(slug).buildRequest(req, target({ providerSlug: slug }), false));
    expect(body.messages).toEqual([
      { role: "system", content: "Terse." },
      { role: "user", content: "Hi" },
    ]);
  });

  it("leaves name off Mistral's system, user and assistant messages and keeps it on tool results", () => {
    const req = chat({
      messages: [
        { role: "system", content: "Be brief.", name: "policy" },
        { role: "user", content: "Weather?", name: "ana" },
        { role: "assistant", content: null, name: "bot", tool_calls: [{ id: "D681PevKs", type: "function", function: { name: "weather", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "D681PevKs", name: "weather", content: "sunny" },
      ],
    });
    const body = bodyOf(mistral.buildRequest(req, target({ providerSlug: "mistral" }), false));
    expect(body.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather?" },
      { role: "assistant", content: null, tool_calls: [{ id: "D681PevKs", type: "function", function: { name: "weather", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "D681PevKs", name: "weather", content: "sunny" },
    ]);
    const groq = bodyOf(compatible("groq").buildRequest(req, target({ providerSlug: "groq" }), false));
    expect(groq.messages[1]).toEqual({ role: "user", content: "Weather?", name: "ana" });
  });

  it("never forwards what a client echoes of an earlier answer", () => {
    const req = chat({
      messages: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello.", reasoning: "Greet back.", reasoning_details: [{ type: "reasoning.text", text: "Greet back." }] },
        { role: "user", content: "Bye" },
      ],
    });
    for (const slug of ["openai", "mistral"]) {
      const body = bodyOf(compatible(slug).buildRequest(req, target({ providerSlug: slug }), false));
      expect(body.messages[1]).toEqual({ role: "assistant", content: "Hello." });
    }
  });

  it.each([
    ["openai", 4],
    ["groq", 4],
    ["xai", 4],
  ])("refuses more stop sequences than %s takes (%i) before sending", (slug, limit) => {
    const err = thrown(() => compatible(slug).buildRequest(chat({ stop: stops(limit + 1) }), target({ providerSlug: slug }), false));
    expect(err).toBeInstanceOf(UnsupportedRequest);
    expect(err).toMatchObject({ field: "stop", message: `stop: ${slug} takes at most ${limit} stop sequences` });
    const body = bodyOf(compatible(slug).buildRequest(chat({ stop: stops(limit) }), target({ providerSlug: slug }), false));
    expect(body.stop).toEqual(stops(limit));
  });

  it.each(["mistral", "deepseek", "together", "fireworks", "vllm", "ollama", "my-llm-server"])(
    "passes every stop sequence the edge allows to %s",
    (slug) => {
      const body = bodyOf(compatible(slug).buildRequest(chat({ stop: stops(16) }), target({ providerSlug: slug }), false));
      expect(body.stop).toEqual(stops(16));
    },
  );

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

  it("reads cache writes where a gateway in front of a caching provider reports them (OpenRouter's cache_write_tokens)", () => {
    const c = openai.parseCompletion({
      id: "gen-1",
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content: "x" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 900, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 700 } },
    });
    expect(c.usage).toEqual({ prompt: 900, completion: 2, cached: 100, reasoning: 0, cacheWrite5m: 700 });
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

  it("reads Mistral's validation error (422 extra_forbidden)", () => {
    expect(mistral.parseError(sample("mistral-error-422.json"))).toEqual({
      code: "extra_forbidden",
      message: "Extra inputs are not permitted: body.stream_options",
    });
  });

  it("reads vLLM's top-level error object", () => {
    const body = '{"object":"error","message":"This model\'s maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400}';
    expect(compatible("vllm").parseError(body)).toEqual({ code: "BadRequestError", message: "This model's maximum context length is 4096 tokens." });
  });

  it.each([
    ["stop", "stop"],
    ["length", "length"],
    ["model_length", "length"],
    ["tool_calls", "tool_calls"],
    ["function_call", "tool_calls"],
    ["content_filter", "content_filter"],
    ["error", "error"],
    ["insufficient_system_resource", "error"],
    ["eos", "stop"],
  ])("maps finish reason %s to %s and keeps the native one", (native, normalized) => {
    const c = mistral.parseCompletion({ choices: [{ index: 0, message: { role: "assistant", content: "x" }, finish_reason: native }] });
    expect(c.choices[0]).toMatchObject({ finish_reason: normalized, native_finish_reason: native });
  });

  it("leaves a missing finish reason missing", () => {
    expect(normalizeOpenAiFinish(null)).toBeNull();
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

  it("reads Mistral's usage from its finish chunk", async () => {
    const events = await decodeStream(mistral, sample("mistral-stream.sse"));
    const got = collect(events);
    expect(got.content).toBe("Le meilleur fromage ?");
    expect(got.finishes).toEqual([{ finish: "stop", native: "stop" }]);
    expect(got.usage).toEqual({ prompt: 10, completion: 6, cached: 0, reasoning: 0 });
    expect(events[events.length - 1]).toEqual({ type: "done" });
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
