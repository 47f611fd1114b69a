import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import {
  bedrockRegionOf,
  FAKE_AWS_ACCESS_KEY_ID,
  FAKE_AWS_SECRET_ACCESS_KEY,
  fakeEmbedding,
  gatewayClient,
  startFakeBedrock,
  startStack,
  streamedText,
  waitFor,
  type FakeBedrock,
  type RecordedRequest,
  type Stack,
} from "@router/testkit";

/**
 * Amazon Bedrock through the separate-process stack: an organisation adds its AWS keys for three
 * regions over the API (a Bedrock credential serves its own region), and every ingress format
 * reaches Claude (InvokeModel with Anthropic's Messages body) and Llama (Converse), stream and not,
 * signed with SigV4: the fake verifies every signature and refuses one it cannot recompute.
 *
 * Role assumption (`role_arn`) is not covered here: the gateway asks STS at AWS's own endpoint, which
 * no base URL override reaches, so a stack cannot point it at a fake. Its cache is unit-tested with
 * an injected STS client (services/gateway/test/providers/bedrock.test.ts).
 */

const CLAUDE = "anthropic/claude-sonnet-4.5";
const LLAMA = "meta-llama/llama-3.3-70b-instruct";
const REGIONS = ["eu-central-1", "eu-west-1", "us-east-1"];
// Price order: Bedrock's endpoints of one price keep the catalog's order, eu-central-1 first.
const BY_PRICE = { sort: "price" };
const user = (text: string) => [{ role: "user", content: text }];
const bodyOf = (r: RecordedRequest | undefined) => (r?.body ?? {}) as Record<string, any>;

describe("Amazon Bedrock through the stack", () => {
  let stack: Stack;
  let bedrock: FakeBedrock;
  let mgmt: ReturnType<typeof gatewayClient>;
  let client: ReturnType<typeof gatewayClient>;
  let inferenceKey: string;
  const last = (): RecordedRequest => {
    const r = bedrock.requests[bedrock.requests.length - 1];
    if (!r) throw new Error("the fake Bedrock received no request");
    return r;
  };
  const record = (id: string) =>
    waitFor(
      async () => {
        const r = await mgmt.get(`/v1/activity/requests/${id}`);
        return r.status === 200 ? (r.json.data as Record<string, any>) : undefined;
      },
      { timeoutMs: 15_000, what: "the request's record" },
    );

  beforeAll(async () => {
    bedrock = await startFakeBedrock();
    // The operator's base URL for Bedrock stands in for every region's host; the region travels in the signature's scope.
    stack = await startStack({ providerBaseUrls: { bedrock: bedrock.url } });
    const org = await stack.createOrg("Bedrock shop");
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    for (const region of REGIONS) {
      const added = await mgmt.post("/v1/provider-keys", {
        provider: "bedrock",
        name: `Bedrock ${region}`,
        bedrock: { region, access_key_id: FAKE_AWS_ACCESS_KEY_ID, secret_access_key: FAKE_AWS_SECRET_ACCESS_KEY },
      });
      expect(added.status).toBe(201);
    }
    const created = await mgmt.post("/v1/keys", { name: "bedrock app" });
    inferenceKey = created.json.data.key as string;
    client = gatewayClient(stack.gatewayUrl, inferenceKey);
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await bedrock?.close();
  });

  beforeEach(() => bedrock.reset());

  it("lists the credentials with their region and the access key's last four characters, never the secret", async () => {
    const list = await mgmt.get("/v1/provider-keys");
    expect(list.status).toBe(200);
    const eu = list.json.data.find((c: Record<string, any>) => c.name === "Bedrock eu-central-1");
    expect(eu).toMatchObject({ provider_slug: "bedrock", key_hint: FAKE_AWS_ACCESS_KEY_ID.slice(-4), settings: { region: "eu-central-1" } });
    expect(list.text).not.toContain(FAKE_AWS_SECRET_ACCESS_KEY);
  });

  it("refuses a credential document with a field missing or wrong, naming it", async () => {
    const badKey = await mgmt.post("/v1/provider-keys", { provider: "bedrock", bedrock: { region: "eu-central-1", access_key_id: "not a key", secret_access_key: FAKE_AWS_SECRET_ACCESS_KEY } });
    expect(badKey.status).toBe(400);
    expect(badKey.json.error.message).toContain("bedrock.access_key_id");
    const noSecret = await mgmt.post("/v1/provider-keys", { provider: "bedrock", bedrock: { region: "eu-central-1", access_key_id: FAKE_AWS_ACCESS_KEY_ID } });
    expect(noSecret.status).toBe(400);
    expect(noSecret.json.error.message).toContain("bedrock.secret_access_key");
    expect(badKey.text + noSecret.text).not.toContain(FAKE_AWS_SECRET_ACCESS_KEY);
  });

  it("serves Claude through InvokeModel: signed for the endpoint's region, no model in the body, Bedrock's anthropic_version", async () => {
    bedrock.script({ text: "Hello from Claude on Bedrock.", usage: { prompt: 7, completion: 6 } });
    const res = await client.post("/v1/chat/completions", { model: CLAUDE, messages: user("Hi"), max_tokens: 64, provider: BY_PRICE });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ model: CLAUDE, provider: "bedrock" });
    expect(res.json.choices[0].message.content).toBe("Hello from Claude on Bedrock.");
    expect(res.json.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 6 });
    const sent = last();
    expect(sent.path).toBe("/model/eu.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke");
    expect(bedrockRegionOf(sent)).toBe("eu-central-1");
    expect(sent.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIA\w+\/\d{8}\/eu-central-1\/bedrock\/aws4_request/);
    expect(bodyOf(sent)).toMatchObject({ anthropic_version: "bedrock-2023-05-31", max_tokens: 64, messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }] });
    expect(bodyOf(sent).model).toBeUndefined();
    expect(sent.headers["x-api-key"]).toBeUndefined();
  });

  it("streams Claude from event-stream frames, with usage on the last chunk", async () => {
    bedrock.script({ chunks: ["Streamed ", "from ", "Bedrock"], usage: { prompt: 5, completion: 3 } });
    const res = await client.stream({ model: CLAUDE, messages: user("Hi"), provider: BY_PRICE });
    expect(res.status).toBe(200);
    expect(streamedText(res.chunks)).toBe("Streamed from Bedrock");
    expect(res.chunks[res.chunks.length - 1].usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 3 });
    expect(last().path).toBe("/model/eu.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream");
    expect(bodyOf(last()).stream).toBeUndefined();
  });

  it("serves Llama through Converse and ConverseStream, tool calls included", async () => {
    bedrock.script({ text: "Llama here." });
    const res = await client.post("/v1/chat/completions", { model: LLAMA, messages: [{ role: "system", content: "Be brief." }, ...user("Hi")], max_tokens: 40 });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ model: LLAMA, provider: "bedrock" });
    expect(res.json.choices[0].message.content).toBe("Llama here.");
    expect(last().path).toBe("/model/us.meta.llama3-3-70b-instruct-v1%3A0/converse");
    expect(bedrockRegionOf(last())).toBe("us-east-1");
    expect(bodyOf(last())).toEqual({ system: [{ text: "Be brief." }], messages: [{ role: "user", content: [{ text: "Hi" }] }], inferenceConfig: { maxTokens: 40 } });

    bedrock.script({ toolCalls: [{ id: "tooluse_1", name: "get_weather", arguments: { city: "Oslo" } }] });
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
    const called = await client.post("/v1/chat/completions", { model: LLAMA, messages: user("Weather in Oslo?"), tools });
    expect(called.status).toBe(200);
    expect(called.json.choices[0]).toMatchObject({
      finish_reason: "tool_calls",
      message: { tool_calls: [{ id: "tooluse_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }] },
    });
    expect(bodyOf(last()).toolConfig.tools[0].toolSpec.name).toBe("get_weather");

    bedrock.script({ chunks: ["Conversing ", "in ", "frames"], usage: { prompt: 4, completion: 3 } });
    const streamed = await client.stream({ model: LLAMA, messages: user("Hi") });
    expect(streamed.status).toBe(200);
    expect(streamedText(streamed.chunks)).toBe("Conversing in frames");
    expect(streamed.chunks[streamed.chunks.length - 1].usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 3 });
    expect(last().path).toBe("/model/us.meta.llama3-3-70b-instruct-v1%3A0/converse-stream");
  });

  it("serves the Responses API through the OpenAI SDK, stream and not", async () => {
    const openai = new OpenAI({ apiKey: inferenceKey, baseURL: `${stack.gatewayUrl}/v1`, maxRetries: 0 });
    bedrock.script({ text: "Responses via Bedrock." });
    const answer = await openai.responses.create({ model: CLAUDE, input: "Hello", max_output_tokens: 100 });
    expect(answer.output_text).toBe("Responses via Bedrock.");
    bedrock.script({ chunks: ["Streamed ", "response."] });
    const stream = await openai.responses.create({ model: LLAMA, input: "Hello", stream: true });
    let text = "";
    for await (const ev of stream) if (ev.type === "response.output_text.delta") text += ev.delta;
    expect(text).toBe("Streamed response.");
    expect(bedrock.requests.map((r) => r.path.split("/").pop())).toEqual(["invoke", "converse-stream"]);
  });

  it("passes a Messages body with cache markers to Claude on Bedrock, and reports the cache's use", async () => {
    const anthropic = new Anthropic({ apiKey: inferenceKey, baseURL: stack.gatewayUrl, maxRetries: 0 });
    const system = [{ type: "text" as const, text: "You are a careful assistant. ".repeat(40), cache_control: { type: "ephemeral" as const } }];
    const ask = () => anthropic.messages.create({ model: CLAUDE, max_tokens: 100, system, messages: [{ role: "user", content: "Hello" }] }, { headers: { "anthropic-beta": "context-1m-2025-08-07" } });
    bedrock.script({ text: "First." }, { text: "Second." });
    const first = await ask();
    const second = await ask();
    expect(first.content).toEqual([expect.objectContaining({ type: "text", text: "First." })]);
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(bedrock.requests).toHaveLength(2);
    for (const r of bedrock.requests) {
      expect(bodyOf(r).system[0].cache_control).toEqual({ type: "ephemeral" });
      expect(bodyOf(r)).toMatchObject({ anthropic_version: "bedrock-2023-05-31", anthropic_beta: ["context-1m-2025-08-07"] });
      expect(r.path).toMatch(/\/invoke$/);
    }

    bedrock.script({ chunks: ["Streamed ", "message."] });
    const streamed = await anthropic.messages.stream({ model: CLAUDE, max_tokens: 100, system, messages: [{ role: "user", content: "Hello" }] }).finalText();
    expect(streamed).toBe("Streamed message.");
    expect(last().path).toMatch(/\/invoke-with-response-stream$/);
  });

  it("serves embeddings: Titan one text at a time, Cohere in a batch", async () => {
    const titan = await client.post("/v1/embeddings", { model: "amazon/titan-embed-text-v2", input: "hello bedrock", dimensions: 256 });
    expect(titan.status).toBe(200);
    expect(titan.json.data[0].embedding).toEqual(fakeEmbedding("hello bedrock", 256));
    expect(titan.json.usage).toMatchObject({ prompt_tokens: 2 });
    expect(last().path).toBe("/model/amazon.titan-embed-text-v2%3A0/invoke");
    expect(bodyOf(last())).toEqual({ inputText: "hello bedrock", dimensions: 256, normalize: true });

    const cohere = await client.post("/v1/embeddings", { model: "cohere/embed-multilingual-v3", input: ["eins", "zwei"] });
    expect(cohere.status).toBe(200);
    expect(cohere.json.data.map((d: Record<string, any>) => d.embedding)).toEqual([fakeEmbedding("eins", 1024), fakeEmbedding("zwei", 1024)]);
    expect(bodyOf(last())).toEqual({ texts: ["eins", "zwei"], input_type: "search_document" });

    const batch = await client.post("/v1/embeddings", { model: "amazon/titan-embed-text-v2", input: ["a", "b"] });
    expect(batch.status).toBe(400);
    expect(batch.json.error.message).toContain("one text per request");
  });

  it("fails over from a throttled eu-central-1 to eu-west-1 before the first byte, keeping none of Bedrock's words", async () => {
    const words = "Too many tokens per minute for account 123456789012, please wait before trying again.";
    bedrock.failRegion("eu-central-1", { kind: "status", status: 429, code: "ThrottlingException", message: words });
    try {
      const res = await client.post("/v1/chat/completions", { model: CLAUDE, messages: user("Hi"), provider: BY_PRICE });
      expect(res.status).toBe(200);
      expect(bedrock.requests.map(bedrockRegionOf)).toEqual(["eu-central-1", "eu-west-1"]);
      const rec = await record(res.json.id as string);
      expect(rec.attempts.map((a: Record<string, any>) => a.status)).toEqual(["error", "ok"]);
      expect(JSON.stringify(rec)).toContain("ThrottlingException");
      expect(JSON.stringify(rec)).not.toContain(words);
    } finally {
      bedrock.failRegion("eu-central-1", null);
    }
  });

  it("fails over when a stream ends in a throttling exception before any content", async () => {
    bedrock.script({ failure: { kind: "stream-error", chunks: 0, code: "throttlingException", message: "Too many requests" } }, { chunks: ["Second ", "region."] });
    const res = await client.stream({ model: CLAUDE, messages: user("Hi"), provider: BY_PRICE });
    expect(res.status).toBe(200);
    expect(streamedText(res.chunks)).toBe("Second region.");
    expect(bedrock.requests.map(bedrockRegionOf)).toEqual(["eu-central-1", "eu-west-1"]);
  });

  it("with the privacy policy's regions [eu], stays in the EU regions, even when both are throttled", async () => {
    expect((await mgmt.put("/v1/privacy", { regions: ["eu"] })).status).toBe(200);
    try {
      for (let i = 0; i < 4; i++) {
        const res = await client.post("/v1/chat/completions", { model: CLAUDE, messages: user("Stay in the EU") });
        expect(res.status).toBe(200);
      }
      for (const r of bedrock.requests) expect(["eu-central-1", "eu-west-1"]).toContain(bedrockRegionOf(r));
      bedrock.reset();
      bedrock.failRegion("eu-central-1", { kind: "status", status: 429 });
      bedrock.failRegion("eu-west-1", { kind: "status", status: 429 });
      const throttled = await client.post("/v1/chat/completions", { model: CLAUDE, messages: user("Stay in the EU") });
      expect(throttled.status).toBe(429);
      expect(bedrock.requests.map(bedrockRegionOf).sort()).toEqual(["eu-central-1", "eu-west-1"]);
    } finally {
      bedrock.failRegion("eu-central-1", null);
      bedrock.failRegion("eu-west-1", null);
      await mgmt.put("/v1/privacy", { regions: [] });
    }
  });

  it("gives a clear error for a secret the signature check refuses, and never logs or returns the secret", async () => {
    const wrongSecret = "wrongSecretKey/NotTheOneBedrockKnows+abcdef0123";
    const org = await stack.createOrg("Wrong secret shop");
    const m = gatewayClient(stack.gatewayUrl, org.managementKey);
    const added = await m.post("/v1/provider-keys", { provider: "bedrock", bedrock: { region: "eu-central-1", access_key_id: FAKE_AWS_ACCESS_KEY_ID, secret_access_key: wrongSecret } });
    expect(added.status).toBe(201);
    const key = (await m.post("/v1/keys", { name: "k" })).json.data.key as string;
    const res = await gatewayClient(stack.gatewayUrl, key).post("/v1/chat/completions", { model: CLAUDE, messages: user("Hi") });
    // Bedrock's 403 is the provider's answer, not the caller's fault: a 502 naming its status and code.
    expect(res.status).toBe(502);
    expect(res.json.error.details).toMatchObject({ provider: "bedrock", provider_status: 403, provider_code: "InvalidSignatureException" });
    expect(bedrock.requests.map(bedrockRegionOf)).toEqual(["eu-central-1"]);
    expect(res.text + added.text + stack.logs()).not.toContain(wrongSecret);
    expect(stack.logs()).not.toContain(FAKE_AWS_SECRET_ACCESS_KEY);
  });
});
