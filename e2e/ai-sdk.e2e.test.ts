import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import OpenAI from "openai";
import { fakeThinkingSignature, gatewayClient, startFakeAnthropic, startFakeOpenAi, startStack, type FakeUpstream, type Stack } from "@router/testkit";

/**
 * The Vercel AI SDK (`ai@6`, `@ai-sdk/openai@3`) with its defaults through the gateway: `openai(model)`
 * speaks Responses with `store` on, so the second step of a tool loop names the first step's
 * reasoning and text by `item_reference`. Router keeps the first answer (stored responses) and
 * puts the items back, so a provider that signs its reasoning (Anthropic thinking) gets it on the
 * tool-calling turn, as it requires. `openai.chat(model)` runs the same loop over chat completions.
 */

const MODEL = "anthropic/claude-sonnet-4";
const THINKING = "The user wants the weather; I should call the weather tool for Paris.";

interface SentBody {
  input?: Array<Record<string, unknown>>;
  store?: unknown;
}

describe("the AI SDK's multi-step tool loop through the gateway", () => {
  let stack: Stack;
  let anthropic: FakeUpstream;
  let openaiFake: FakeUpstream;
  let keyA: string;
  let keyB: string;
  let keyZdr: string;
  /** What the AI SDK sent to POST /v1/responses, recorded by a fetch that forwards unchanged. */
  const sent: SentBody[] = [];

  const provider = () =>
    createOpenAI({
      baseURL: `${stack.gatewayUrl}/v1`,
      apiKey: keyA,
      fetch: async (url, init) => {
        if (String(url).endsWith("/responses") && typeof init?.body === "string") sent.push(JSON.parse(init.body) as SentBody);
        return fetch(url, init);
      },
    });

  const weather = tool({
    description: "The weather in a city",
    inputSchema: jsonSchema<{ city: string }>({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
    execute: async ({ city }) => ({ city, sky: "sunny", celsius: 21 }),
  });

  const keyOf = async (name: string, privacy?: Record<string, unknown>) => {
    const org = await stack.createOrg(name);
    const mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    if (privacy) expect((await mgmt.put("/v1/privacy", privacy)).status).toBe(200);
    for (const [slug, api_key] of [["anthropic", "sk-ant-aisdk-0001"], ["openai", "sk-openai-aisdk-0001"], ["groq", "gsk-aisdk-0001"]]) {
      expect((await mgmt.post("/v1/provider-keys", { provider: slug, api_key })).status).toBe(201);
    }
    const created = await mgmt.post("/v1/keys", { name: "ai-sdk" });
    expect(created.status).toBe(201);
    return created.json.data.key as string;
  };

  beforeAll(async () => {
    [anthropic, openaiFake] = await Promise.all([startFakeAnthropic(), startFakeOpenAi()]);
    // Groq declares ZDR for openai/gpt-oss-120b in the catalog: the organisation whose policy demands ZDR is served there.
    stack = await startStack({ providerBaseUrls: { anthropic: anthropic.url, openai: openaiFake.url, groq: openaiFake.url } });
    keyA = await keyOf("AI SDK Co");
    keyB = await keyOf("Other Co");
    keyZdr = await keyOf("ZDR Co", { zdr: true });
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([anthropic?.close(), openaiFake?.close()]);
  });

  beforeEach(() => {
    anthropic.reset();
    openaiFake.reset();
    sent.length = 0;
  });

  /** The messages of the n-th request the fake Anthropic received. */
  const anthropicMessages = (n: number) => (anthropic.requests[n]?.body as { messages: Array<{ role: string; content: unknown }> }).messages;

  const scriptToolThenText = () =>
    anthropic.script(
      { reasoning: THINKING, toolCalls: [{ id: "toolu_w1", name: "weather", arguments: { city: "Paris" } }], usage: { prompt: 40, completion: 12 } },
      { text: "Sunny and 21 degrees in Paris.", usage: { prompt: 80, completion: 9 } },
    );

  it("openai(model) with its defaults: reasoning and a tool call, then text; the second step names the first by item_reference", async () => {
    scriptToolThenText();

    const result = await generateText({
      model: provider()(MODEL),
      tools: { weather },
      stopWhen: stepCountIs(3),
      prompt: "What is the weather in Paris?",
      // A reasoning request (Anthropic thinking); the model id is not one the SDK knows reasons.
      providerOptions: { openai: { reasoningEffort: "low", forceReasoning: true } },
    });

    expect(result.text).toBe("Sunny and 21 degrees in Paris.");
    expect(result.steps).toHaveLength(2);
    // The SDK's second request refers to the stored reasoning instead of sending it.
    expect(sent).toHaveLength(2);
    expect(sent[0]?.store).toBeUndefined();
    expect(sent[1]?.input?.some((item) => item.type === "item_reference" && String(item.id).startsWith("rs_"))).toBe(true);

    // The second upstream request carries the first step's signed thinking, tool call and result.
    expect(anthropic.requests).toHaveLength(2);
    const [, assistant, toolTurn] = anthropicMessages(1);
    expect(assistant?.role).toBe("assistant");
    expect(assistant?.content).toEqual([
      { type: "thinking", thinking: THINKING, signature: fakeThinkingSignature(THINKING) },
      expect.objectContaining({ type: "tool_use", id: "toolu_w1", name: "weather", input: { city: "Paris" } }),
    ]);
    expect(JSON.stringify(toolTurn?.content)).toContain("toolu_w1");
    expect(JSON.stringify(toolTurn?.content)).toContain("sunny");

    // The first answer is kept for its organisation, and for it only.
    const firstId = result.steps[0]?.response.id ?? "";
    expect(firstId).toMatch(/^gen-/);
    const ownSdk = new OpenAI({ apiKey: keyA, baseURL: `${stack.gatewayUrl}/v1`, maxRetries: 0 });
    const kept = await ownSdk.responses.retrieve(firstId);
    expect(kept.id).toBe(firstId);
    expect(kept.output.map((o) => o.type)).toEqual(["reasoning", "function_call"]);
    const otherSdk = new OpenAI({ apiKey: keyB, baseURL: `${stack.gatewayUrl}/v1`, maxRetries: 0 });
    await expect(otherSdk.responses.retrieve(firstId)).rejects.toMatchObject({ status: 404 });
    const raw = await fetch(`${stack.gatewayUrl}/v1/responses/${firstId}`, { headers: { authorization: `Bearer ${keyB}` } });
    expect(raw.status).toBe(404);
    expect(await raw.text()).not.toContain("Paris");
  });

  it("streamText with the same loop: the streamed answer is kept before response.completed", async () => {
    scriptToolThenText();

    const result = streamText({
      model: provider()(MODEL),
      tools: { weather },
      stopWhen: stepCountIs(3),
      prompt: "What is the weather in Paris?",
      providerOptions: { openai: { reasoningEffort: "low", forceReasoning: true } },
    });

    expect(await result.text).toBe("Sunny and 21 degrees in Paris.");
    expect(await result.steps).toHaveLength(2);
    expect(sent[1]?.input?.some((item) => item.type === "item_reference")).toBe(true);
    expect(anthropicMessages(1)[1]?.content).toEqual(expect.arrayContaining([expect.objectContaining({ type: "thinking", thinking: THINKING })]));
  });

  it("previous_response_id continues a kept conversation; another organisation's id is a 404 naming it", async () => {
    openaiFake.script({ text: "Nice to meet you, Ada.", usage: { prompt: 10, completion: 5 } }, { text: "Your name is Ada.", usage: { prompt: 20, completion: 5 } });
    const sdkA = new OpenAI({ apiKey: keyA, baseURL: `${stack.gatewayUrl}/v1`, maxRetries: 0 });
    const first = await sdkA.responses.create({ model: "openai/gpt-4o-mini", input: "My name is Ada." });
    expect((first as unknown as { store: boolean }).store).toBe(true);

    const second = await sdkA.responses.create({ model: "openai/gpt-4o-mini", input: "What is my name?", previous_response_id: first.id });
    expect(second.output_text).toBe("Your name is Ada.");
    expect(second.previous_response_id).toBe(first.id);
    const upstream = JSON.stringify(openaiFake.requests[1]?.body);
    expect(upstream).toContain("My name is Ada.");
    expect(upstream).toContain("Nice to meet you, Ada.");

    const sdkB = new OpenAI({ apiKey: keyB, baseURL: `${stack.gatewayUrl}/v1`, maxRetries: 0 });
    await expect(sdkB.responses.create({ model: "openai/gpt-4o-mini", input: "And mine?", previous_response_id: first.id })).rejects.toMatchObject({
      status: 404,
      error: expect.objectContaining({ param: "previous_response_id" }),
    });
    expect(openaiFake.requests).toHaveLength(2);

    await sdkA.responses.delete(first.id);
    await expect(sdkA.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
  });

  it("an organisation whose privacy policy demands ZDR: store: true is a 400 naming the policy, a default store keeps nothing", async () => {
    const sdk = new OpenAI({ apiKey: keyZdr, baseURL: `${stack.gatewayUrl}/v1`, maxRetries: 0 });
    const refused = await sdk.responses.create({ model: "openai/gpt-oss-120b", input: "Hi", store: true }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    const error = (refused as InstanceType<typeof OpenAI.BadRequestError>).error as Record<string, unknown>;
    expect(error).toMatchObject({ param: "store", details: { field: "store", policy: "privacy.zdr" } });
    expect(String(error.message)).toContain("privacy policy");
    expect(openaiFake.requests).toHaveLength(0);

    openaiFake.script({ text: "Hello." });
    const served = await sdk.responses.create({ model: "openai/gpt-oss-120b", input: "Hi" });
    expect(served.output_text).toBe("Hello.");
    expect((served as unknown as { store: boolean }).store).toBe(false);
    await expect(sdk.responses.retrieve(served.id)).rejects.toMatchObject({ status: 404 });
  });

  it("openai.chat(model): the same loop over chat completions, with nothing stored", async () => {
    openaiFake.script(
      { toolCalls: [{ id: "call_w1", name: "weather", arguments: { city: "Paris" } }], usage: { prompt: 30, completion: 8 } },
      { text: "Sunny in Paris.", usage: { prompt: 50, completion: 5 } },
    );

    const result = await generateText({ model: provider().chat("openai/gpt-4o-mini"), tools: { weather }, stopWhen: stepCountIs(3), prompt: "Weather in Paris?" });

    expect(result.text).toBe("Sunny in Paris.");
    expect(sent).toHaveLength(0);
    const second = JSON.stringify(openaiFake.requests[1]?.body);
    expect(second).toContain("call_w1");
    expect(second).toContain("sunny");
  });
});
