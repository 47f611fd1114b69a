import {
  gatewayClient,
  startFakeAnthropic,
  startFakeGemini,
  startFakeOpenAi,
  startStack,
  streamedText,
  waitFor,
  type FakeUpstream,
  type RecordedRequest,
  type Stack,
} from "@router/testkit";

/**
 * Every provider family through the separate-process stack (gateway, routing, ledger and activity
 * as their own processes on Postgres, Redis and the Redis Streams bus): the request each provider
 * receives in its own wire format, the normalized answer, streamed and not, and the usage priced
 * from the catalog.
 */

type Client = ReturnType<typeof gatewayClient>;

/** One OpenAI-compatible provider, a model only it serves for an organisation holding only its key. */
const OPENAI_COMPATIBLE: Array<{ slug: string; model: string; upstreamModel: string }> = [
  { slug: "openai", model: "openai/gpt-4o-mini", upstreamModel: "gpt-4o-mini" },
  { slug: "mistral", model: "mistralai/mistral-small", upstreamModel: "mistral-small-latest" },
  { slug: "groq", model: "meta-llama/llama-3.1-8b-instruct", upstreamModel: "llama-3.1-8b-instant" },
  { slug: "deepseek", model: "deepseek/deepseek-chat", upstreamModel: "deepseek-chat" },
  { slug: "xai", model: "x-ai/grok-3-mini", upstreamModel: "grok-3-mini" },
  { slug: "together", model: "meta-llama/llama-3.1-8b-instruct", upstreamModel: "meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo" },
  { slug: "fireworks", model: "meta-llama/llama-3.1-8b-instruct", upstreamModel: "accounts/fireworks/models/llama-v3p1-8b-instruct" },
  { slug: "vllm", model: "meta-llama/llama-3.1-8b-instruct", upstreamModel: "meta-llama/Llama-3.1-8B-Instruct" },
  { slug: "ollama", model: "meta-llama/llama-3.1-8b-instruct", upstreamModel: "llama3.1:8b" },
];

const user = (text: string) => [{ role: "user", content: text }];
const lastRequest = (fake: FakeUpstream): RecordedRequest => {
  const r = fake.requests[fake.requests.length - 1];
  if (!r) throw new Error("the fake provider received no request");
  return r;
};
const bodyOf = (r: RecordedRequest) => r.body as Record<string, any>;

describe("every provider family through the separate-process stack", () => {
  let stack: Stack;
  let anthropic: FakeUpstream;
  let gemini: FakeUpstream;
  const compatible = new Map<string, FakeUpstream>();
  /** An inference client per provider slug, in an organisation that holds only that provider's key. */
  const clients = new Map<string, Client>();
  const keys = new Map<string, string>();
  let mgmtOf: Map<string, Client>;

  beforeAll(async () => {
    // The OpenAI and Mistral fakes refuse what their APIs refuse (unknown fields: stream_options at
    // Mistral, top_k at OpenAI); the other servers take fields of their own (top_k).
    const flavourOf = (slug: string) => (slug === "mistral" ? "mistral" : slug === "openai" ? "openai" : "compatible");
    for (const p of OPENAI_COMPATIBLE) compatible.set(p.slug, await startFakeOpenAi({ flavour: flavourOf(p.slug) }));
    [anthropic, gemini] = await Promise.all([startFakeAnthropic(), startFakeGemini()]);
    const providerBaseUrls: Record<string, string> = { anthropic: anthropic.url, google: gemini.url };
    for (const [slug, fake] of compatible) providerBaseUrls[slug] = fake.url;
    stack = await startStack({ providerBaseUrls });
    mgmtOf = new Map();
    await Promise.all(
      [...compatible.keys(), "anthropic", "google"].map(async (slug) => {
        const org = await stack.createOrg(`Only ${slug}`);
        const mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
        const apiKey = `key-${slug}-${org.orgId.slice(-6)}`;
        const added = await mgmt.post("/v1/provider-keys", { provider: slug, api_key: apiKey });
        expect(added.status).toBe(201);
        const created = await mgmt.post("/v1/keys", { name: `${slug} app` });
        expect(created.status).toBe(201);
        keys.set(slug, apiKey);
        clients.set(slug, gatewayClient(stack.gatewayUrl, created.json.data.key as string));
        mgmtOf.set(slug, mgmt);
      }),
    );
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([...compatible.values(), anthropic, gemini].map((f) => f?.close()));
  });

  const client = (slug: string): Client => clients.get(slug) as Client;
  const activityRequest = (slug: string, id: string) =>
    waitFor(
      async () => {
        const r = await (mgmtOf.get(slug) as Client).get(`/v1/activity/requests/${id}`);
        return r.status === 200 ? (r.json.data as Record<string, any>) : undefined;
      },
      { timeoutMs: 15_000, what: `activity request ${id}` },
    );

  describe.each(OPENAI_COMPATIBLE)("OpenAI-compatible: $slug", ({ slug, model, upstreamModel }) => {
    const fake = () => compatible.get(slug) as FakeUpstream;

    it("serves a completion with the organisation's key and the endpoint's upstream model", async () => {
      fake().script({ text: `Hello from ${slug}.`, usage: { prompt: 11, completion: 4 } });
      const res = await client(slug).post("/v1/chat/completions", { model, messages: user("Hi"), temperature: 0.3, stop: ["\n\n"] });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ object: "chat.completion", model, provider: slug });
      expect(res.json.choices[0]).toMatchObject({ message: { role: "assistant", content: `Hello from ${slug}.` }, finish_reason: "stop" });
      expect(res.json.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 });

      const sent = lastRequest(fake());
      expect(sent.path).toBe("/v1/chat/completions");
      expect(sent.headers.authorization).toBe(`Bearer ${keys.get(slug)}`);
      expect(bodyOf(sent)).toMatchObject({ model: upstreamModel, messages: user("Hi"), temperature: 0.3 });
      // grok-3-mini does not take stop sequences (its catalog entry does not list `stop`): dropped.
      expect(bodyOf(sent).stop).toEqual(slug === "xai" ? undefined : ["\n\n"]);
      expect(bodyOf(sent).stream).toBeUndefined();
    });

    it("streams a completion chunk by chunk with usage on the final chunk", async () => {
      fake().script({ chunks: ["Stream ", "from ", slug], usage: { prompt: 6, completion: 3 } });
      const res = await client(slug).stream({ model, messages: user("Hi") });
      expect(res.status).toBe(200);
      expect(res.done).toBe(true);
      expect(streamedText(res.chunks)).toBe(`Stream from ${slug}`);
      for (const c of res.chunks) expect(c).toMatchObject({ object: "chat.completion.chunk", model, provider: slug });
      expect(res.chunks[res.chunks.length - 1].usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 3 });
      const sent = bodyOf(lastRequest(fake()));
      expect(sent).toMatchObject({ model: upstreamModel, stream: true });
      // Mistral refuses stream_options and reports usage on its last chunk unasked.
      expect(sent.stream_options).toEqual(slug === "mistral" ? undefined : { include_usage: true });
    });
  });

  it("passes every sampling, tool and format field to OpenAI, and maps the completion budget and seed per provider", async () => {
    const tools = [{ type: "function", function: { name: "lookup", description: "find", parameters: { type: "object", properties: { q: { type: "string" } } } } }];
    const body = {
      messages: user("Use the tool"),
      max_tokens: 200,
      temperature: 0.5,
      top_p: 0.9,
      top_k: 40,
      stop: "END",
      seed: 42,
      tools,
      tool_choice: { type: "function", function: { name: "lookup" } },
      response_format: { type: "json_object" },
      reasoning: { effort: "low" },
    };
    compatible.get("openai")?.script({ toolCalls: [{ id: "call_1", name: "lookup", arguments: { q: "x" } }] });
    const res = await client("openai").post("/v1/chat/completions", { model: "openai/gpt-4o-mini", ...body });
    expect(res.status).toBe(200);
    expect(res.json.choices[0].finish_reason).toBe("tool_calls");
    expect(res.json.choices[0].message.tool_calls).toEqual([
      { id: "call_1", type: "function", function: { name: "lookup", arguments: JSON.stringify({ q: "x" }) } },
    ]);
    const openaiBody = bodyOf(lastRequest(compatible.get("openai") as FakeUpstream));
    expect(openaiBody).toMatchObject({
      max_completion_tokens: 200,
      temperature: 0.5,
      top_p: 0.9,
      stop: "END",
      seed: 42,
      tools,
      tool_choice: { type: "function", function: { name: "lookup" } },
      response_format: { type: "json_object" },
    });
    // OpenAI takes no top_k: dropped on purpose rather than refused upstream; gpt-4o-mini does not
    // reason (its catalog entry lists no `reasoning`), so no reasoning_effort goes out either.
    expect(openaiBody.top_k).toBeUndefined();
    expect(openaiBody.reasoning_effort).toBeUndefined();
    expect(openaiBody.max_tokens).toBeUndefined();

    const mistral = await client("mistral").post("/v1/chat/completions", { model: "mistralai/mistral-small", ...body });
    expect(mistral.status).toBe(200);
    const mistralBody = bodyOf(lastRequest(compatible.get("mistral") as FakeUpstream));
    expect(mistralBody).toMatchObject({ max_tokens: 200, random_seed: 42 });
    expect(mistralBody.seed).toBeUndefined();

    const together = await client("together").post("/v1/chat/completions", { model: "meta-llama/llama-3.1-8b-instruct", ...body });
    expect(together.status).toBe(200);
    expect(bodyOf(lastRequest(compatible.get("together") as FakeUpstream))).toMatchObject({ top_k: 40, seed: 42, max_tokens: 200 });
  });

  it("fits each request to the endpoint's catalog parameters: o3 gets reasoning effort, not sampling fields", async () => {
    const res = await client("openai").post("/v1/chat/completions", {
      model: "openai/o3",
      messages: user("Think"),
      temperature: 0.5,
      top_p: 0.9,
      stop: ["END"],
      seed: 7,
      reasoning: { effort: "high" },
    });
    expect(res.status).toBe(200);
    const sent = bodyOf(lastRequest(compatible.get("openai") as FakeUpstream));
    expect(sent).toMatchObject({ model: "o3", seed: 7, reasoning_effort: "high" });
    for (const dropped of ["temperature", "top_p", "stop"]) expect(sent[dropped]).toBeUndefined();
  });

  it("serves a legacy prompt as one user message", async () => {
    const res = await client("groq").post("/v1/chat/completions", { model: "meta-llama/llama-3.1-8b-instruct", prompt: "Complete me" });
    expect(res.status).toBe(200);
    expect(bodyOf(lastRequest(compatible.get("groq") as FakeUpstream)).messages).toEqual(user("Complete me"));
  });

  it("returns DeepSeek's reasoning_content as message.reasoning with reasoning tokens", async () => {
    compatible.get("deepseek")?.script({ reasoning: "Let me think.", text: "42", usage: { prompt: 5, completion: 9, reasoning: 6 } });
    const res = await client("deepseek").post("/v1/chat/completions", { model: "deepseek/deepseek-chat", messages: user("?") });
    expect(res.status).toBe(200);
    expect(res.json.choices[0].message).toMatchObject({ content: "42", reasoning: "Let me think." });
    expect(res.json.usage.completion_tokens_details).toMatchObject({ reasoning_tokens: 6 });
  });

  it("prices usage from the catalog per usage line, rounded up to a whole nanodollar, and bills BYOK at 0", async () => {
    // gpt-4o-mini lists $0.15 prompt, $0.075 cached prompt and $0.60 completion per million tokens.
    compatible.get("openai")?.script({ text: "priced", usage: { prompt: 1001, cached: 201, completion: 333 } });
    const res = await client("openai").post("/v1/chat/completions", { model: "openai/gpt-4o-mini", messages: user("Price me") });
    expect(res.status).toBe(200);
    expect(res.json.usage).toMatchObject({ prompt_tokens: 1001, completion_tokens: 333, prompt_tokens_details: { cached_tokens: 201 } });
    const record = await activityRequest("openai", res.json.id as string);
    const lines = Object.fromEntries((record.usage_lines as Array<Record<string, any>>).map((l) => [l.kind, l]));
    expect(lines.prompt).toMatchObject({ tokens: 800, cost_nanodollars: "120000" });
    // 201 × 75 nanodollars = 15 075; 333 × 600 = 199 800.
    expect(lines.cached_prompt).toMatchObject({ tokens: 201, cost_nanodollars: "15075" });
    expect(lines.completion).toMatchObject({ tokens: 333, cost_nanodollars: "199800" });
    expect(record.total_cost).toBe(0);
    expect(record.is_byok).toBe(true);
  });

  describe("Anthropic Messages", () => {
    const model = "anthropic/claude-3.5-haiku";
    /** A model with extended thinking (claude-3.5-haiku has none, so reasoning is dropped there). */
    const thinkingModel = "anthropic/claude-sonnet-4";

    it("sends system, tools, tool choice, tool results, images and stop sequences in the Messages format", async () => {
      anthropic.script({ text: "Done.", usage: { prompt: 30, completion: 2 } });
      const res = await client("anthropic").post(
        "/v1/chat/completions",
        {
          model,
          messages: [
            { role: "system", content: "Be brief." },
            {
              role: "user",
              content: [
                { type: "text", text: "What is in this picture?" },
                { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
              ],
            },
            { role: "assistant", content: null, tool_calls: [{ id: "toolu_1", type: "function", function: { name: "look", arguments: "{\"at\":\"image\"}" } }] },
            { role: "tool", tool_call_id: "toolu_1", content: "a cat" },
          ],
          tools: [{ type: "function", function: { name: "look", parameters: { type: "object", properties: { at: { type: "string" } } } } }],
          tool_choice: "required",
          stop: ["STOP"],
          max_tokens: 300,
          temperature: 0.2,
        },
        { "X-Vendor-Beta": "tools-2024-05-16" },
      );
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ model, provider: "anthropic" });
      expect(res.json.choices[0]).toMatchObject({ message: { content: "Done." }, finish_reason: "stop", native_finish_reason: "end_turn" });

      const sent = lastRequest(anthropic);
      expect(sent.path).toBe("/v1/messages");
      expect(sent.headers["x-api-key"]).toBe(keys.get("anthropic"));
      expect(sent.headers["anthropic-version"]).toBe("2023-06-01");
      expect(sent.headers["anthropic-beta"]).toBe("tools-2024-05-16");
      expect(sent.headers.authorization).toBeUndefined();
      const body = bodyOf(sent);
      expect(body).toMatchObject({
        model: "claude-3-5-haiku-20241022",
        system: "Be brief.",
        max_tokens: 300,
        temperature: 0.2,
        stop_sequences: ["STOP"],
        tool_choice: { type: "any" },
        tools: [{ name: "look", input_schema: { type: "object", properties: { at: { type: "string" } } } }],
      });
      expect(body.messages).toEqual([
        {
          role: "user",
          content: [
            { type: "text", text: "What is in this picture?" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
          ],
        },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "look", input: { at: "image" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "a cat" }] },
      ]);
    });

    it("turns reasoning into a thinking budget (floor 1024) without sampling fields, and returns thinking as message.reasoning", async () => {
      anthropic.script({ reasoning: "Weighing it up.", text: "Yes.", usage: { prompt: 10, completion: 50 } });
      const res = await client("anthropic").post("/v1/chat/completions", {
        model: thinkingModel,
        messages: user("Should I?"),
        reasoning: { max_tokens: 200 },
        max_tokens: 4000,
        temperature: 0.7,
        top_p: 0.9,
        top_k: 5,
      });
      expect(res.status).toBe(200);
      expect(res.json.choices[0].message).toMatchObject({ content: "Yes.", reasoning: "Weighing it up." });
      const body = bodyOf(lastRequest(anthropic));
      expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
      expect(body.temperature).toBeUndefined();
      expect(body.top_p).toBeUndefined();
      expect(body.top_k).toBeUndefined();
    });

    it("returns signed thinking as reasoning_details and takes it back on the next turn of a tool loop", async () => {
      const tools = [{ type: "function", function: { name: "look", parameters: { type: "object" } } }];
      anthropic.script({ reasoning: "I should look.", toolCalls: [{ id: "toolu_r1", name: "look", arguments: { at: "sky" } }] }, { text: "Blue." });
      const first = await client("anthropic").post("/v1/chat/completions", {
        model: thinkingModel,
        messages: user("What colour is the sky?"),
        tools,
        reasoning: { effort: "low" },
        max_tokens: 4000,
      });
      expect(first.status).toBe(200);
      const message = first.json.choices[0].message;
      expect(message.reasoning_details).toEqual([
        expect.objectContaining({ type: "reasoning.text", text: "I should look.", signature: expect.any(String), format: "anthropic-claude-v1" }),
      ]);

      const turn = [
        ...user("What colour is the sky?"),
        { role: "assistant", content: null, tool_calls: message.tool_calls, reasoning_details: message.reasoning_details },
        { role: "tool", tool_call_id: "toolu_r1", content: "blue" },
      ];
      const second = await client("anthropic").post("/v1/chat/completions", { model: thinkingModel, messages: turn, tools, reasoning: { effort: "low" }, max_tokens: 4000 });
      // The fake refuses, as Anthropic does, a thinking request whose tool turn lacks its signed thinking.
      expect(second.status).toBe(200);
      expect(second.json.choices[0].message.content).toBe("Blue.");
      const sent = bodyOf(lastRequest(anthropic));
      expect(sent.thinking).toMatchObject({ type: "enabled" });
      expect(sent.messages[1].content[0]).toEqual({ type: "thinking", thinking: "I should look.", signature: message.reasoning_details[0].signature });
    });

    it("sends a tool loop whose thinking was not echoed without thinking, instead of a request Anthropic refuses", async () => {
      const turn = [
        ...user("Weather?"),
        { role: "assistant", content: null, tool_calls: [{ id: "toolu_x", type: "function", function: { name: "look", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "toolu_x", content: "sunny" },
      ];
      const res = await client("anthropic").post("/v1/chat/completions", { model: thinkingModel, messages: turn, reasoning: { effort: "high" }, temperature: 0.4 });
      expect(res.status).toBe(200);
      const sent = bodyOf(lastRequest(anthropic));
      expect(sent.thinking).toBeUndefined();
      expect(sent.temperature).toBe(0.4);
    });

    it("maps Anthropic stop reasons to the normalized finish_reason and keeps the native one", async () => {
      anthropic.script({ text: "cut", finishReason: "max_tokens" }, { toolCalls: [{ id: "toolu_9", name: "look", arguments: { at: "x" } }] });
      const cut = await client("anthropic").post("/v1/chat/completions", { model, messages: user("long") });
      expect(cut.json.choices[0]).toMatchObject({ finish_reason: "length", native_finish_reason: "max_tokens" });
      const tool = await client("anthropic").post("/v1/chat/completions", { model, messages: user("tool") });
      expect(tool.json.choices[0]).toMatchObject({ finish_reason: "tool_calls", native_finish_reason: "tool_use" });
      expect(tool.json.choices[0].message.tool_calls[0]).toMatchObject({ id: "toolu_9", function: { name: "look", arguments: "{\"at\":\"x\"}" } });
    });

    it("streams thinking as delta.reasoning, then text, with usage and the finish reason at the end", async () => {
      anthropic.script({ reasoning: "Hmm.", chunks: ["Bon", "jour."], usage: { prompt: 7, completion: 12 } });
      const res = await client("anthropic").stream({ model: thinkingModel, messages: user("Hi"), reasoning: { effort: "low" } });
      expect(res.status).toBe(200);
      expect(res.done).toBe(true);
      const reasoning = res.chunks.map((c) => c.choices?.[0]?.delta?.reasoning ?? "").join("");
      expect(reasoning).toBe("Hmm.");
      expect(streamedText(res.chunks)).toBe("Bonjour.");
      const finish = res.chunks.find((c) => c.choices?.[0]?.finish_reason);
      expect(finish.choices[0]).toMatchObject({ finish_reason: "stop", native_finish_reason: "end_turn" });
      expect(res.chunks[res.chunks.length - 1].usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 12 });
      expect(bodyOf(lastRequest(anthropic))).toMatchObject({ stream: true, thinking: { type: "enabled" } });
    });

    it("never sends X-Vendor-Beta to a provider it does not concern", async () => {
      const res = await client("openai").post("/v1/chat/completions", { model: "openai/gpt-4o-mini", messages: user("x") }, { "X-Vendor-Beta": "tools-2024-05-16" });
      expect(res.status).toBe(200);
      const sent = lastRequest(compatible.get("openai") as FakeUpstream);
      expect(sent.headers["anthropic-beta"]).toBeUndefined();
      expect(sent.headers["x-vendor-beta"]).toBeUndefined();
    });
  });

  describe("Google Gemini", () => {
    const model = "google/gemini-2.5-flash";

    it("calls generateContent with the key header, a system instruction and generation settings", async () => {
      gemini.script({ text: "Hallo.", usage: { prompt: 8, completion: 2 } });
      const res = await client("google").post("/v1/chat/completions", {
        model,
        messages: [{ role: "system", content: "German only." }, ...user("Hi")],
        max_tokens: 64,
        temperature: 0.4,
        stop: ["x"],
        seed: 7,
        response_format: { type: "json_object" },
      });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ model, provider: "google" });
      expect(res.json.choices[0]).toMatchObject({ message: { content: "Hallo." }, finish_reason: "stop", native_finish_reason: "STOP" });
      expect(res.json.usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 2 });
      const sent = lastRequest(gemini);
      expect(sent.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
      expect(sent.headers["x-goog-api-key"]).toBe(keys.get("google"));
      expect(bodyOf(sent)).toMatchObject({
        systemInstruction: { parts: [{ text: "German only." }] },
        contents: [{ role: "user", parts: [{ text: "Hi" }] }],
        generationConfig: { maxOutputTokens: 64, temperature: 0.4, stopSequences: ["x"], seed: 7, responseMimeType: "application/json" },
      });
    });

    it("streams through streamGenerateContent as server-sent events", async () => {
      gemini.script({ chunks: ["Guten ", "Tag."], usage: { prompt: 4, completion: 2 } });
      const res = await client("google").stream({ model, messages: user("Hi") });
      expect(res.status).toBe(200);
      expect(res.done).toBe(true);
      expect(streamedText(res.chunks)).toBe("Guten Tag.");
      expect(res.chunks[res.chunks.length - 1].usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 2 });
      const sent = lastRequest(gemini);
      expect(sent.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent");
      expect(sent.query.alt).toBe("sse");
    });

    it("returns function calls as tool calls", async () => {
      gemini.script({ toolCalls: [{ name: "weather", arguments: { city: "Oslo" } }] });
      const res = await client("google").post("/v1/chat/completions", {
        model,
        messages: user("Weather?"),
        tools: [{ type: "function", function: { name: "weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }],
        tool_choice: "auto",
      });
      expect(res.status).toBe(200);
      expect(res.json.choices[0].finish_reason).toBe("tool_calls");
      expect(res.json.choices[0].message.tool_calls[0]).toMatchObject({ type: "function", function: { name: "weather", arguments: "{\"city\":\"Oslo\"}" } });
      expect(bodyOf(lastRequest(gemini)).tools).toEqual([
        { functionDeclarations: [{ name: "weather", parametersJsonSchema: { type: "object", properties: { city: { type: "string" } } } }] },
      ]);
    });
  });
});
