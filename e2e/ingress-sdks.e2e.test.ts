import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import {
  fakeThinkingSignature,
  gatewayClient,
  startFakeAnthropic,
  startFakeGemini,
  startFakeOpenAi,
  startStack,
  waitFor,
  type FakeUpstream,
  type Stack,
} from "@router/testkit";

/**
 * The three ways in, as the official SDKs see them: `openai`'s `responses.create` against
 * `POST /v1/responses` and `@anthropic-ai/sdk`'s `messages.create` against `POST /v1/messages`,
 * each served by an OpenAI-compatible, an Anthropic and a Gemini upstream through the one pipeline
 * (failover, key ceilings, the format's own errors).
 */

type Slug = "openai" | "anthropic" | "google";
const MODELS: Record<Slug, string> = {
  openai: "openai/gpt-4o-mini",
  anthropic: "anthropic/claude-sonnet-4",
  google: "google/gemini-2.5-flash",
};
const SLUGS: Slug[] = ["openai", "anthropic", "google"];
const weather = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };

describe("the Responses and Anthropic Messages ingresses through the official SDKs", () => {
  let stack: Stack;
  const fakes = {} as Record<Slug, FakeUpstream>;
  let key: string;
  let mgmt: ReturnType<typeof gatewayClient>;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    [fakes.openai, fakes.anthropic, fakes.google] = await Promise.all([startFakeOpenAi(), startFakeAnthropic(), startFakeGemini()]);
    stack = await startStack({ providerBaseUrls: { openai: fakes.openai.url, anthropic: fakes.anthropic.url, google: fakes.google.url } });
    const org = await stack.createOrg("Ingress Co");
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    for (const slug of SLUGS) {
      expect((await mgmt.post("/v1/provider-keys", { provider: slug, api_key: `sk-${slug}-ingress-0001` })).status).toBe(201);
    }
    const created = await mgmt.post("/v1/keys", { name: "ingress" });
    expect(created.status).toBe(201);
    key = created.json.data.key as string;
    openai = new OpenAI({ apiKey: key, baseURL: `${stack.gatewayUrl}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: key, baseURL: stack.gatewayUrl, maxRetries: 0 });
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all(Object.values(fakes).map((f) => f.close()));
  });

  beforeEach(() => {
    for (const f of Object.values(fakes)) f.reset();
  });

  const lastBody = (slug: Slug): string => JSON.stringify(fakes[slug].requests.at(-1)?.body ?? null);

  describe.each(SLUGS)("POST /v1/responses served by %s", (slug) => {
    const model = MODELS[slug];

    it("answers text with instructions and a token bound: output_text, usage, the generation id", async () => {
      fakes[slug].script({ text: "Bonjour.", usage: { prompt: 11, completion: 3 } });
      const res = await openai.responses.create({ model, instructions: "Answer in French.", input: "Hello", max_output_tokens: 200 });
      expect(res.id).toMatch(/^gen-/);
      expect(res.object).toBe("response");
      expect(res.status).toBe("completed");
      expect(res.model).toBe(model);
      expect(res.output_text).toBe("Bonjour.");
      expect(res.usage).toMatchObject({ input_tokens: 11, output_tokens: 3, total_tokens: 14 });
      expect(res.instructions).toBe("Answer in French.");
      // `store` defaults to true: the answer is kept (stored responses, e2e/ai-sdk.e2e.test.ts).
      expect((res as unknown as { store: boolean }).store).toBe(true);
      expect(lastBody(slug)).toContain("Answer in French.");
      expect(fakes[slug].requests).toHaveLength(1);
    });

    it("streams a tool call as the Responses event stream, then takes its result back as items", async () => {
      fakes[slug].script({ toolCalls: [{ id: "call_w1", name: "get_weather", arguments: { city: "Paris" } }], usage: { prompt: 20, completion: 9 } });
      const stream = await openai.responses.create({
        model,
        input: [{ role: "user", content: "Weather in Paris?" }],
        tools: [{ type: "function", name: "get_weather", parameters: weather, strict: false }],
        stream: true,
      });
      const types: string[] = [];
      let args = "";
      let completed: OpenAI.Responses.Response | undefined;
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === "response.function_call_arguments.delta") args += event.delta;
        if (event.type === "response.completed") completed = event.response;
      }
      expect(types[0]).toBe("response.created");
      expect(types).toContain("response.output_item.added");
      expect(types).toContain("response.function_call_arguments.done");
      expect(types.at(-1)).toBe("response.completed");
      expect(JSON.parse(args)).toEqual({ city: "Paris" });
      const call = completed?.output.find((o) => o.type === "function_call");
      expect(call).toMatchObject({ type: "function_call", name: "get_weather" });
      expect(completed?.usage).toMatchObject({ input_tokens: 20, output_tokens: 9 });

      fakes[slug].script({ text: "Sunny, 21 degrees.", usage: { prompt: 30, completion: 5 } });
      const callId = (call as OpenAI.Responses.ResponseFunctionToolCall).call_id;
      const answer = await openai.responses.create({
        model,
        input: [
          { role: "user", content: "Weather in Paris?" },
          { type: "function_call", call_id: callId, name: "get_weather", arguments: '{"city":"Paris"}' },
          { type: "function_call_output", call_id: callId, output: '{"sky":"sunny","celsius":21}' },
        ],
        tools: [{ type: "function", name: "get_weather", parameters: weather, strict: false }],
      });
      expect(answer.output_text).toBe("Sunny, 21 degrees.");
      // The tool result reached the provider in its own wire format.
      expect(lastBody(slug)).toContain("sunny");
    });
  });

  it("Responses: structured output and reasoning effort reach the provider", async () => {
    fakes.openai.script({ text: '{"answer":42}' });
    const res = await openai.responses.create({
      model: MODELS.openai,
      input: "The answer?",
      text: { format: { type: "json_schema", name: "answer", schema: { type: "object", properties: { answer: { type: "number" } } } } },
    });
    expect(JSON.parse(res.output_text)).toEqual({ answer: 42 });
    expect(fakes.openai.requests[0]?.body).toMatchObject({ response_format: { type: "json_schema", json_schema: { name: "answer" } } });

    fakes.google.script({ reasoning: "Thinking it over.", text: "Yes." });
    const reasoned = await openai.responses.create({ model: MODELS.google, input: "Sure?", reasoning: { effort: "high" }, max_output_tokens: 2000 });
    expect(reasoned.output.map((o) => o.type)).toEqual(["reasoning", "message"]);
    expect(fakes.google.requests[0]?.body).toMatchObject({ generationConfig: { thinkingConfig: { thinkingBudget: expect.any(Number) } } });
  });

  it("Responses: the SDK's inputTokens.count answers an estimate, marked as one, and asks no provider", async () => {
    const { data, response } = await openai.responses.inputTokens
      .count({ model: MODELS.openai, instructions: "Answer in French.", input: [{ role: "user", content: "How many tokens is this sentence?" }] })
      .withResponse();
    expect(data.object).toBe("response.input_tokens");
    expect(data.input_tokens).toBeGreaterThan(5);
    expect(data.input_tokens).toBeLessThan(100);
    expect(response.headers.get("x-router-token-count")).toBe("estimate");
    for (const slug of SLUGS) expect(fakes[slug].requests).toHaveLength(0);
  });

  it("Responses: an unknown previous_response_id is a 404 naming it, in the OpenAI envelope", async () => {
    const err = await openai.responses.create({ model: MODELS.openai, input: "Hi", previous_response_id: "resp_123" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    const error = (err as InstanceType<typeof OpenAI.NotFoundError>).error as Record<string, unknown>;
    expect(error).toMatchObject({ type: "not_found_error", param: "previous_response_id", code: "not_found" });
    expect(String(error.message)).toContain("resp_123");

    const bad = await openai.responses.create({ model: MODELS.openai, input: [{ role: "robot", content: "Hi" }] as never }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect((bad as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param: "input.0.role" });
    expect(fakes.openai.requests).toHaveLength(0);
  });

  describe("Responses: Anthropic thinking continues a tool loop through echoed reasoning items", () => {
    const thinking = "The user wants Paris weather; call the tool.";
    const tools: OpenAI.Responses.Tool[] = [{ type: "function", name: "get_weather", parameters: weather, strict: false }];
    // What an OpenAI client sends when nothing is stored: it asks for the reasoning and echoes the items back.
    const stateless = {
      model: MODELS.anthropic,
      reasoning: { effort: "high" as const },
      tools,
      store: false,
      include: ["reasoning.encrypted_content" as const],
    };
    const question: OpenAI.Responses.ResponseInputItem = { role: "user", content: "Weather in Paris?" };

    /** Sends the items back with the tool's result, and checks Anthropic got the signed thinking first on the tool-calling turn. */
    async function continueWith(items: OpenAI.Responses.ResponseOutputItem[]): Promise<void> {
      const call = items.find((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === "function_call");
      expect(call).toBeDefined();
      fakes.anthropic.script({ text: "Sunny, 21 degrees." });
      const answer = await openai.responses.create({
        ...stateless,
        input: [question, ...(items as OpenAI.Responses.ResponseInputItem[]), { type: "function_call_output", call_id: call!.call_id, output: '{"celsius":21}' }],
      });
      expect(answer.output_text).toBe("Sunny, 21 degrees.");
      const sent = fakes.anthropic.requests.at(-1)?.body as { thinking?: unknown; messages: Array<{ role: string; content: unknown[] }> };
      expect(sent.thinking).toMatchObject({ type: "enabled" });
      expect(sent.messages[1]).toEqual({
        role: "assistant",
        content: [
          { type: "thinking", thinking, signature: fakeThinkingSignature(thinking) },
          { type: "tool_use", id: call!.call_id, name: "get_weather", input: { city: "Paris" } },
        ],
      });
    }

    it("from a whole answer", async () => {
      fakes.anthropic.script({ reasoning: thinking, toolCalls: [{ id: "toolu_p1", name: "get_weather", arguments: { city: "Paris" } }] });
      const first = await openai.responses.create({ ...stateless, input: [question] });
      expect(first.output.map((o) => o.type)).toEqual(["reasoning", "function_call"]);
      const reasoning = first.output[0] as OpenAI.Responses.ResponseReasoningItem;
      expect(reasoning.content).toEqual([{ type: "reasoning_text", text: thinking }]);
      expect(reasoning.encrypted_content).toEqual(expect.any(String));
      await continueWith(first.output);
    });

    it("from a stream's output_item.done events", async () => {
      fakes.anthropic.script({ reasoning: thinking, toolCalls: [{ id: "toolu_p2", name: "get_weather", arguments: { city: "Paris" } }] });
      const stream = await openai.responses.create({ ...stateless, input: [question], stream: true });
      const done: OpenAI.Responses.ResponseOutputItem[] = [];
      for await (const event of stream) if (event.type === "response.output_item.done") done.push(event.item);
      expect(done.map((o) => o.type)).toEqual(["reasoning", "function_call"]);
      expect((done[0] as OpenAI.Responses.ResponseReasoningItem).encrypted_content).toEqual(expect.any(String));
      await continueWith(done);
    });
  });

  describe.each(SLUGS)("POST /v1/messages served by %s", (slug) => {
    const model = MODELS[slug];

    it("answers with a system prompt and tools: a tool_use block and stop_reason tool_use", async () => {
      fakes[slug].script({ toolCalls: [{ id: "toolu_01", name: "get_weather", arguments: { city: "Oslo" } }], usage: { prompt: 25, completion: 8 } });
      const msg = await anthropic.messages.create({
        model,
        max_tokens: 1024,
        system: [{ type: "text", text: "You are a weather bot." }],
        messages: [{ role: "user", content: "Weather in Oslo?" }],
        tools: [{ name: "get_weather", description: "Current weather", input_schema: weather as Anthropic.Tool.InputSchema }],
      });
      expect(msg.id).toMatch(/^gen-/);
      expect(msg.type).toBe("message");
      expect(msg.model).toBe(model);
      expect(msg.stop_reason).toBe("tool_use");
      const use = msg.content.find((b) => b.type === "tool_use");
      expect(use).toMatchObject({ type: "tool_use", name: "get_weather", input: { city: "Oslo" } });
      expect(msg.usage).toMatchObject({ input_tokens: 25, output_tokens: 8 });
      expect(lastBody(slug)).toContain("You are a weather bot.");

      fakes[slug].script({ text: "Cold: -3 degrees." });
      const answer = await anthropic.messages.create({
        model,
        max_tokens: 1024,
        messages: [
          { role: "user", content: "Weather in Oslo?" },
          { role: "assistant", content: msg.content as Anthropic.ContentBlockParam[] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: (use as Anthropic.ToolUseBlock).id, content: "minus three, snowing" }] },
        ],
        tools: [{ name: "get_weather", input_schema: weather as Anthropic.Tool.InputSchema }],
      });
      expect(answer.content).toEqual([{ type: "text", text: "Cold: -3 degrees." }]);
      expect(answer.stop_reason).toBe("end_turn");
      expect(lastBody(slug)).toContain("minus three, snowing");
    });

    it("streams thinking and text as the Messages event stream; the SDK assembles the message", async () => {
      fakes[slug].script({ reasoning: "Let me think.", chunks: ["Hej ", "verden."], usage: { prompt: 9, completion: 40 } });
      const stream = anthropic.messages.stream({
        model,
        max_tokens: 4000,
        thinking: { type: "enabled", budget_tokens: 2048 },
        messages: [{ role: "user", content: "Say hello in Danish" }],
      });
      const events: string[] = [];
      stream.on("streamEvent", (e) => events.push(e.type));
      const msg = await stream.finalMessage();
      expect(events[0]).toBe("message_start");
      expect(events).toContain("content_block_delta");
      expect(events.at(-1)).toBe("message_stop");
      expect(msg.content.map((b) => b.type)).toEqual(["thinking", "text"]);
      expect(msg.content[0]).toMatchObject({ type: "thinking", thinking: "Let me think." });
      expect(msg.content[1]).toMatchObject({ type: "text", text: "Hej verden." });
      expect(msg.stop_reason).toBe("end_turn");
      expect(msg.usage).toMatchObject({ input_tokens: 9, output_tokens: 40 });
    });
  });

  it("Messages: a bearer key and anthropic-beta work as well as x-api-key; the beta reaches Anthropic", async () => {
    const bearer = new Anthropic({ authToken: key, apiKey: null, baseURL: stack.gatewayUrl, maxRetries: 0 });
    fakes.anthropic.script({ text: "Hi." });
    const msg = await bearer.messages.create(
      { model: MODELS.anthropic, max_tokens: 100, system: "Be brief.", messages: [{ role: "user", content: "Hi" }] },
      { headers: { "anthropic-beta": "tools-2024-05-16" } },
    );
    expect(msg.content).toEqual([{ type: "text", text: "Hi." }]);
    expect(fakes.anthropic.requests[0]?.headers["anthropic-beta"]).toBe("tools-2024-05-16");
    expect(fakes.anthropic.requests[0]?.headers["x-api-key"]).toBe("sk-anthropic-ingress-0001");
  });

  it("Messages: a tool_result with is_error reaches Anthropic with is_error", async () => {
    fakes.anthropic.script({ text: "The weather service is down." });
    await anthropic.messages.create({
      model: MODELS.anthropic,
      max_tokens: 100,
      messages: [
        { role: "user", content: "Weather in Oslo?" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_e1", name: "get_weather", input: { city: "Oslo" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_e1", content: "upstream timeout", is_error: true }] },
      ],
      tools: [{ name: "get_weather", input_schema: weather as Anthropic.Tool.InputSchema }],
    });
    const sent = fakes.anthropic.requests[0]?.body as { messages: Array<{ content: unknown[] }> };
    expect(sent.messages[2]?.content).toEqual([{ type: "tool_result", tool_use_id: "toolu_e1", content: "upstream timeout", is_error: true }]);
  });

  it("Messages: bad input is a 400 in Anthropic's error shape naming the field; a bad key is a 401", async () => {
    const err = await anthropic.messages.create({ model: MODELS.openai, max_tokens: 10, messages: [{ role: "robot", content: "Hi" }] as never }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    const body = (err as InstanceType<typeof Anthropic.BadRequestError>).error as Record<string, any>;
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toMatch(/^messages\.0\.role/);

    const raw = await fetch(`${stack.gatewayUrl}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: MODELS.openai, messages: [{ role: "user", content: "Hi" }] }),
    });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error", message: expect.stringMatching(/^max_tokens/) } });

    const stranger = new Anthropic({ apiKey: "rt-v1-not-a-key", baseURL: stack.gatewayUrl, maxRetries: 0 });
    const unauthorized = await stranger.messages.create({ model: MODELS.openai, max_tokens: 10, messages: [{ role: "user", content: "Hi" }] }).catch((e: unknown) => e);
    expect(unauthorized).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((unauthorized as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({ type: "error", error: { type: "authentication_error" } });
    expect(fakes.openai.requests).toHaveLength(0);
  });

  it("fails over through each ingress: the first provider's 503 moves on to the fallback model", async () => {
    const fallback = { models: [MODELS.anthropic] };
    fakes.openai.script({ failure: { kind: "status", status: 503 } });
    fakes.anthropic.script({ text: "From the fallback." });
    const viaResponses = await openai.responses.create({ model: MODELS.openai, input: "Hi", ...fallback } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    expect(viaResponses.output_text).toBe("From the fallback.");
    expect(viaResponses.model).toBe(MODELS.anthropic);

    fakes.openai.script({ failure: { kind: "status", status: 503 } });
    fakes.anthropic.script({ chunks: ["From ", "the fallback."] });
    const stream = anthropic.messages.stream({ model: MODELS.openai, max_tokens: 100, messages: [{ role: "user", content: "Hi" }], ...fallback } as Anthropic.MessageStreamParams);
    const msg = await stream.finalMessage();
    expect(msg.content).toEqual([{ type: "text", text: "From the fallback." }]);
    expect(msg.model).toBe(MODELS.anthropic);
    expect(fakes.openai.requests).toHaveLength(2);
    expect(fakes.anthropic.requests).toHaveLength(2);
  });

  it("refuses a key at its ceiling through each ingress, in each format's error shape, before any provider is asked", async () => {
    const created = await mgmt.post("/v1/keys", { name: "capped", limit: 0.000000001, limit_reset: "lifetime", limit_mode: "hard", include_byok_in_limit: true });
    const capped = created.json.data.key as string;
    fakes.openai.script({ text: "spend", usage: { prompt: 1000, completion: 1000 } });
    const cappedSdk = new OpenAI({ apiKey: capped, baseURL: `${stack.gatewayUrl}/v1`, maxRetries: 0 });
    expect((await cappedSdk.responses.create({ model: MODELS.openai, input: "spend" })).status).toBe("completed");
    const client = gatewayClient(stack.gatewayUrl, capped);
    await waitFor(async () => ((await client.get("/v1/key")).json.data?.usage > 0 ? true : undefined));
    const before = fakes.openai.requests.length;

    const viaResponses = await cappedSdk.responses.create({ model: MODELS.openai, input: "Hi" }).catch((e: unknown) => e);
    expect(viaResponses).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((viaResponses as InstanceType<typeof OpenAI.PermissionDeniedError>).error).toMatchObject({
      type: "permission_error",
      code: "budget_exceeded",
      details: { scope: "key" },
    });

    const cappedAnthropic = new Anthropic({ apiKey: capped, baseURL: stack.gatewayUrl, maxRetries: 0 });
    const viaMessages = await cappedAnthropic.messages.create({ model: MODELS.openai, max_tokens: 10, messages: [{ role: "user", content: "Hi" }] }).catch((e: unknown) => e);
    expect(viaMessages).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((viaMessages as InstanceType<typeof Anthropic.PermissionDeniedError>).error).toMatchObject({
      type: "error",
      error: { type: "permission_error", code: "budget_exceeded" },
    });
    expect(fakes.openai.requests.length).toBe(before);
  });

  it("records which ingress each request came in by", async () => {
    fakes.openai.script({ text: "a" }, { text: "b" }, { text: "c" });
    const viaChat = await openai.chat.completions.create({ model: MODELS.openai, messages: [{ role: "user", content: "Hi" }] });
    const viaResponses = await openai.responses.create({ model: MODELS.openai, input: "Hi" });
    const viaMessages = await anthropic.messages.create({ model: MODELS.openai, max_tokens: 10, messages: [{ role: "user", content: "Hi" }] });
    const expected = new Map([
      [viaChat.id, "chat_completions"],
      [viaResponses.id, "responses"],
      [viaMessages.id, "anthropic_messages"],
    ]);
    const rows = await waitFor(async () => {
      const r = await mgmt.get("/v1/activity?limit=50");
      const found = (r.json.data as Array<{ id: string; ingress: string }>).filter((row) => expected.has(row.id));
      return found.length === 3 ? found : undefined;
    });
    for (const row of rows) expect(row.ingress).toBe(expected.get(row.id));
  });
});
