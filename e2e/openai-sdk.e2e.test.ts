import OpenAI from "openai";
import { gatewayClient, startFakeOpenAi, startStack, type FakeUpstream, type Stack } from "@router/testkit";

/**
 * The gateway as the official `openai` SDK sees it: a client pointed at `<gateway>/v1` with a Router
 * inference key gets completions, streams and typed errors exactly as from OpenAI itself.
 */

const MODEL = "openai/gpt-4o-mini";

describe("the official openai SDK against the gateway", () => {
  let stack: Stack;
  let provider: FakeUpstream;
  let sdk: OpenAI;

  beforeAll(async () => {
    provider = await startFakeOpenAi();
    stack = await startStack({ providerBaseUrls: { openai: provider.url } });
    const org = await stack.createOrg("SDK Co");
    const mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    expect((await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: "sk-sdk-0001" })).status).toBe(201);
    const created = await mgmt.post("/v1/keys", { name: "sdk" });
    expect(created.status).toBe(201);
    // No retries: every answer the test sees is the gateway's first.
    sdk = new OpenAI({ apiKey: (created.json.data as { key: string }).key, baseURL: `${stack.gatewayUrl}/v1`, maxRetries: 0 });
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await provider?.close();
  });

  beforeEach(() => provider.reset());

  it("creates a completion: the answer, its usage, a generation id and the model that served", async () => {
    provider.script({ text: "Hello from the fake.", usage: { prompt: 12, completion: 5 } });

    const completion = await sdk.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "Hi" }] });

    expect(completion.id).toMatch(/^gen-/);
    expect(completion.object).toBe("chat.completion");
    expect(completion.model).toBe(MODEL);
    expect(completion.choices[0]?.message).toMatchObject({ role: "assistant", content: "Hello from the fake." });
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    expect(completion.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
    // The provider was called with the organisation's own key, not the Router key.
    expect(provider.requests[0]?.headers.authorization).toBe("Bearer sk-sdk-0001");
  });

  it("streams: the SDK assembles the text from the chunks and reads the usage on the last one", async () => {
    provider.script({ chunks: ["One, ", "two, ", "three."], usage: { prompt: 8, completion: 6 } });

    const stream = await sdk.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "Count" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    const ids = new Set<string>();
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      ids.add(chunk.id);
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }

    expect(text).toBe("One, two, three.");
    expect([...ids]).toHaveLength(1);
    expect([...ids][0]).toMatch(/^gen-/);
    expect(usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 6, total_tokens: 14 });
  });

  it("raises the SDK's typed errors with the gateway's status and code", async () => {
    const badRequest = await sdk.chat.completions.create({ model: MODEL, messages: [] }).catch((e: unknown) => e);
    expect(badRequest).toBeInstanceOf(OpenAI.BadRequestError);
    expect(badRequest).toMatchObject({ status: 400, code: "invalid_request" });

    const unknownModel = await sdk.chat.completions
      .create({ model: "nobody/no-such-model", messages: [{ role: "user", content: "Hi" }] })
      .catch((e: unknown) => e);
    expect(unknownModel).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknownModel).toMatchObject({ status: 404, code: "model_not_found" });

    const stranger = new OpenAI({ apiKey: "rt-v1-not-a-key", baseURL: `${stack.gatewayUrl}/v1`, maxRetries: 0 });
    const unauthorized = await stranger.chat.completions
      .create({ model: MODEL, messages: [{ role: "user", content: "Hi" }] })
      .catch((e: unknown) => e);
    expect(unauthorized).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(unauthorized).toMatchObject({ status: 401, code: "unauthorized" });

    expect(provider.requests).toHaveLength(0);
  });
});
