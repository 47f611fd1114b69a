import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import {
  fakeEmbedding,
  gatewayClient,
  startFakeVertex,
  startStack,
  streamedText,
  testServiceAccount,
  waitFor,
  type FakeVertex,
  type RecordedRequest,
  type ServiceAccountKey,
  type Stack,
} from "@router/testkit";

/**
 * Google Vertex AI through the separate-process stack: an organisation adds one service account
 * for four regions over the API (a Vertex credential serves its own region), and every ingress
 * format reaches Gemini and Claude on Vertex, stream and not, with a bearer token the gateway mints
 * from the service account at the fake's own token endpoint.
 */

const GEMINI = "google/gemini-2.5-flash";
const CLAUDE = "anthropic/claude-sonnet-4.5";
const REGIONS = ["europe-west4", "us-central1", "europe-west1", "us-east5"];
const user = (text: string) => [{ role: "user", content: text }];
const bodyOf = (r: RecordedRequest | undefined) => (r?.body ?? {}) as Record<string, any>;
/** `/v1/projects/{project}/locations/{region}/publishers/{publisher}/models/{model}:{method}` */
const partsOf = (r: RecordedRequest | undefined) => {
  const m = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/([^/]+)\/models\/([^/:]+):(\w+)$/.exec(r?.path ?? "");
  if (!m) throw new Error(`not a Vertex model path: ${r?.path}`);
  return { project: m[1], region: m[2], publisher: m[3], model: decodeURIComponent(m[4] ?? ""), method: m[5] };
};

describe("Google Vertex AI through the stack", () => {
  let stack: Stack;
  let vertex: FakeVertex;
  let account: ServiceAccountKey;
  let mgmt: ReturnType<typeof gatewayClient>;
  let client: ReturnType<typeof gatewayClient>;
  let inferenceKey: string;
  const last = (): RecordedRequest | undefined => vertex.modelRequests().at(-1);
  const record = (id: string) =>
    waitFor(
      async () => {
        const r = await mgmt.get(`/v1/activity/requests/${id}`);
        return r.status === 200 ? (r.json.data as Record<string, any>) : undefined;
      },
      { timeoutMs: 15_000, what: "the request's record" },
    );

  beforeAll(async () => {
    vertex = await startFakeVertex({ regions: REGIONS });
    // The operator's base URL for Vertex stands in for every region's host; the region stays in the path.
    stack = await startStack({ providerBaseUrls: { vertex: vertex.url } });
    const org = await stack.createOrg("Vertex shop");
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    account = vertex.serviceAccount();
    for (const region of REGIONS) {
      // The key file's text, as an operator pastes it.
      const added = await mgmt.post("/v1/provider-keys", { provider: "vertex", name: `Vertex ${region}`, vertex: { project: vertex.project, region, service_account: JSON.stringify(account) } });
      expect(added.status).toBe(201);
    }
    const created = await mgmt.post("/v1/keys", { name: "vertex app" });
    inferenceKey = created.json.data.key as string;
    client = gatewayClient(stack.gatewayUrl, inferenceKey);
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await vertex?.close();
  });

  beforeEach(() => vertex.reset());

  it("lists the credentials with project, region and account, never the private key", async () => {
    const list = await mgmt.get("/v1/provider-keys");
    expect(list.status).toBe(200);
    const eu = list.json.data.find((c: Record<string, any>) => c.name === "Vertex europe-west4");
    expect(eu).toMatchObject({
      provider_slug: "vertex",
      key_hint: account.private_key_id.slice(-4),
      settings: { project: vertex.project, region: "europe-west4", client_email: account.client_email },
    });
    expect(list.text).not.toContain("PRIVATE KEY");
    expect(list.text).not.toContain(account.private_key.split("\n")[1]);
  });

  it("serves Gemini chat completions with a bearer token minted once for many requests", async () => {
    const minted = vertex.minted();
    for (const text of ["Eins.", "Zwei.", "Drei."]) {
      vertex.script({ text, usage: { prompt: 9, completion: 2 } });
      const res = await client.post("/v1/chat/completions", { model: GEMINI, messages: user("Hallo"), max_tokens: 50 });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ model: GEMINI, provider: "vertex" });
      expect(res.json.choices[0].message.content).toBe(text);
      expect(res.json.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 2 });
    }
    // One service account, one token, whichever region served.
    expect(vertex.minted() - minted).toBe(1);
    for (const r of vertex.modelRequests()) {
      expect(partsOf(r)).toMatchObject({ project: vertex.project, publisher: "google", model: "gemini-2.5-flash", method: "generateContent" });
      expect(["europe-west4", "us-central1"]).toContain(partsOf(r).region);
      expect(r.headers.authorization).toMatch(/^Bearer ya29\.fake-/);
      expect(r.headers["x-goog-api-key"]).toBeUndefined();
      expect(bodyOf(r)).toMatchObject({ contents: [{ role: "user", parts: [{ text: "Hallo" }] }], generationConfig: { maxOutputTokens: 50 } });
    }
    expect(new Set(vertex.modelRequests().map((r) => r.headers.authorization)).size).toBe(1);
  });

  it("streams Gemini with usage on the last chunk", async () => {
    vertex.script({ chunks: ["Gestreamt ", "von ", "Vertex"], usage: { prompt: 5, completion: 3 } });
    const res = await client.stream({ model: GEMINI, messages: user("Hi") });
    expect(res.status).toBe(200);
    expect(streamedText(res.chunks)).toBe("Gestreamt von Vertex");
    expect(res.chunks[res.chunks.length - 1].usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 3 });
    expect(partsOf(last()).method).toBe("streamGenerateContent");
    expect(last()?.query.alt).toBe("sse");
  });

  it("serves Claude through rawPredict and streamRawPredict: no model in the body, Vertex's anthropic_version", async () => {
    vertex.script({ text: "Hello from Claude on Vertex.", usage: { prompt: 7, completion: 6 } });
    const res = await client.post("/v1/chat/completions", { model: CLAUDE, messages: user("Hi"), max_tokens: 64 });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ model: CLAUDE, provider: "vertex" });
    expect(res.json.choices[0].message.content).toBe("Hello from Claude on Vertex.");
    expect(partsOf(last())).toMatchObject({ publisher: "anthropic", model: "claude-sonnet-4-5@20250929", method: "rawPredict" });
    expect(["europe-west1", "us-east5"]).toContain(partsOf(last()).region);
    expect(bodyOf(last())).toMatchObject({ anthropic_version: "vertex-2023-10-16", max_tokens: 64 });
    expect(bodyOf(last()).model).toBeUndefined();

    vertex.script({ chunks: ["Streamed ", "Claude"] });
    const streamed = await client.stream({ model: CLAUDE, messages: user("Hi") });
    expect(streamed.status).toBe(200);
    expect(streamedText(streamed.chunks)).toBe("Streamed Claude");
    expect(partsOf(last()).method).toBe("streamRawPredict");
    expect(bodyOf(last()).stream).toBe(true);
  });

  it("serves the Responses API through the OpenAI SDK, stream and not", async () => {
    const openai = new OpenAI({ apiKey: inferenceKey, baseURL: `${stack.gatewayUrl}/v1`, maxRetries: 0 });
    vertex.script({ text: "Responses via Vertex." });
    const answer = await openai.responses.create({ model: GEMINI, input: "Hello", max_output_tokens: 100 });
    expect(answer.output_text).toBe("Responses via Vertex.");
    vertex.script({ chunks: ["Streamed ", "response."] });
    const stream = await openai.responses.create({ model: CLAUDE, input: "Hello", stream: true });
    let text = "";
    for await (const ev of stream) if (ev.type === "response.output_text.delta") text += ev.delta;
    expect(text).toBe("Streamed response.");
    expect(vertex.modelRequests().map((r) => partsOf(r).method)).toEqual(["generateContent", "streamRawPredict"]);
  });

  it("passes a Messages body with cache markers to Claude on Vertex, and reports the cache's use", async () => {
    const anthropic = new Anthropic({ apiKey: inferenceKey, baseURL: stack.gatewayUrl, maxRetries: 0 });
    const system = [{ type: "text" as const, text: "You are a careful assistant. ".repeat(40), cache_control: { type: "ephemeral" as const } }];
    const ask = () => anthropic.messages.create({ model: CLAUDE, max_tokens: 100, system, messages: [{ role: "user", content: "Hello" }] });
    vertex.script({ text: "First." }, { text: "Second." });
    const first = await ask();
    const second = await ask();
    expect(first.content).toEqual([expect.objectContaining({ type: "text", text: "First." })]);
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    const sent = vertex.modelRequests();
    expect(sent).toHaveLength(2);
    for (const r of sent) {
      expect(bodyOf(r).system[0].cache_control).toEqual({ type: "ephemeral" });
      expect(bodyOf(r)).toMatchObject({ anthropic_version: "vertex-2023-10-16" });
      expect(partsOf(r).method).toBe("rawPredict");
    }

    vertex.script({ chunks: ["Streamed ", "message."] });
    const streamed = await anthropic.messages.stream({ model: CLAUDE, max_tokens: 100, system, messages: [{ role: "user", content: "Hello" }] }).finalText();
    expect(streamed).toBe("Streamed message.");
  });

  it("estimates a Messages token count for Claude on Vertex rather than asking Anthropic's count route with the wrong credential", async () => {
    const anthropic = new Anthropic({ apiKey: inferenceKey, baseURL: stack.gatewayUrl, maxRetries: 0 });
    const before = vertex.requests.length;
    const { data, response } = await anthropic.messages.countTokens({ model: CLAUDE, messages: [{ role: "user", content: "How many tokens is this?" }] }).withResponse();
    expect(data.input_tokens).toBeGreaterThan(0);
    expect(response.headers.get("x-router-token-count")).toBe("estimate");
    expect(vertex.requests.length).toBe(before);
    expect(stack.logs()).not.toContain("gateway.count_tokens.provider_refused");
    expect(stack.logs()).not.toContain("gateway.count_tokens.provider_failed");
  });

  it("serves embeddings through predict, with token counts", async () => {
    const res = await client.post("/v1/embeddings", { model: "google/gemini-embedding-001", input: "hello vertex", dimensions: 4 });
    expect(res.status).toBe(200);
    expect(res.json.data).toHaveLength(1);
    expect(res.json.data[0].embedding).toEqual(fakeEmbedding("hello vertex", 4));
    expect(res.json.usage).toMatchObject({ prompt_tokens: 2 });
    expect(partsOf(last())).toMatchObject({ publisher: "google", model: "gemini-embedding-001", method: "predict" });
    expect(bodyOf(last())).toEqual({ instances: [{ content: "hello vertex" }], parameters: { outputDimensionality: 4 } });
  });

  it("fails over from a throttled region to the other before the first byte, keeping none of Vertex's words", async () => {
    const words = "Quota exceeded for aiplatform.googleapis.com/generate_content_requests_per_minute";
    vertex.script({ failure: { kind: "status", status: 429, code: "RESOURCE_EXHAUSTED", message: words } }, { text: "Served by the other region." });
    const res = await client.post("/v1/chat/completions", { model: GEMINI, messages: user("Hi") });
    expect(res.status).toBe(200);
    expect(res.json.choices[0].message.content).toBe("Served by the other region.");
    const [throttled, served] = vertex.modelRequests();
    expect(partsOf(throttled).region).not.toBe(partsOf(served).region);
    const rec = await record(res.json.id as string);
    expect(rec.attempts.map((a: Record<string, any>) => a.status)).toEqual(["error", "ok"]);
    expect(JSON.stringify(rec)).toContain("RESOURCE_EXHAUSTED");
    expect(JSON.stringify(rec)).not.toContain(words);
  });

  it("with the privacy policy's regions [eu], stays in europe-west4, even when that region is throttled", async () => {
    expect((await mgmt.put("/v1/privacy", { regions: ["eu"] })).status).toBe(200);
    try {
      for (let i = 0; i < 4; i++) {
        const res = await client.post("/v1/chat/completions", { model: GEMINI, messages: user("Stay in the EU") });
        expect(res.status).toBe(200);
      }
      expect(vertex.modelRequests().map((r) => partsOf(r).region)).toEqual(["europe-west4", "europe-west4", "europe-west4", "europe-west4"]);
      vertex.reset();
      vertex.throttle("europe-west4");
      const throttled = await client.post("/v1/chat/completions", { model: GEMINI, messages: user("Stay in the EU") });
      expect(throttled.status).toBe(429);
      expect(vertex.modelRequests().map((r) => partsOf(r).region)).toEqual(["europe-west4"]);
    } finally {
      vertex.throttle("europe-west4", false);
      await mgmt.put("/v1/privacy", { regions: [] });
    }
  });

  it("gives a clear error for a service account the token endpoint refuses, and never logs or returns its key", async () => {
    const stranger = testServiceAccount({ tokenUri: vertex.tokenUri, project: vertex.project }).key;
    const org = await stack.createOrg("Unknown account shop");
    const m = gatewayClient(stack.gatewayUrl, org.managementKey);
    const added = await m.post("/v1/provider-keys", { provider: "vertex", vertex: { project: vertex.project, region: "europe-west4", service_account: stranger } });
    expect(added.status).toBe(201);
    const key = (await m.post("/v1/keys", { name: "k" })).json.data.key as string;
    const res = await gatewayClient(stack.gatewayUrl, key).post("/v1/chat/completions", { model: GEMINI, messages: user("Hi") });
    expect(res.status).toBe(502);
    expect(res.json.error.message).toContain("vertex credential could not be used (token_refused_400)");
    expect(vertex.modelRequests()).toHaveLength(0);
    const keyLine = stranger.private_key.split("\n")[1] as string;
    expect(res.text + added.text + stack.logs()).not.toContain(keyLine);
    expect(stack.logs()).not.toContain("PRIVATE KEY");
  });

  it("refuses a credential document with a field missing or wrong, naming it", async () => {
    const noProject = await mgmt.post("/v1/provider-keys", { provider: "vertex", vertex: { region: "europe-west4", service_account: account } });
    expect(noProject.status).toBe(400);
    expect(noProject.json.error.message).toContain("vertex.project");
    const notAKey = await mgmt.post("/v1/provider-keys", { provider: "vertex", vertex: { project: vertex.project, region: "europe-west4", service_account: { ...account, private_key: "hunter2" } } });
    expect(notAKey.status).toBe(400);
    expect(notAKey.json.error.message).toContain("vertex.service_account.private_key");
    expect(noProject.text + notAKey.text).not.toContain(account.private_key.split("\n")[1]);
  });
});
