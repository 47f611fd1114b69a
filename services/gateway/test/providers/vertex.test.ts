import { startFakeVertex, testServiceAccount, type FakeVertex, type ServiceAccountKey } from "@router/testkit";
import { vertexCredentialSchema } from "@router/providers";
import { adapterFor } from "@router/providers";
import { VertexAccessTokens, type AccessTokenSource } from "../../../../libs/providers/src/vertex/access-tokens";
import { vertexAdapters, VERTEX_ANTHROPIC_VERSION } from "../../../../libs/providers/src/vertex";
import { tokenUriAllowed, vertexApiRoot } from "../../../../libs/providers/src/vertex/urls";
import { UpstreamAuthError, type ProviderAdapter, type UpstreamHttpRequest, type UpstreamTarget } from "@router/providers";
import { bodyOf, chat, collect, decodeStream, target, thrown } from "./wire-samples";

const CATALOG_BASE = "https://{region}-aiplatform.googleapis.com/v1";

/** A Vertex AI target: the credential document as the route stores it, the catalog's region. */
function vertexTarget(account: ServiceAccountKey, overrides: Partial<UpstreamTarget> = {}): UpstreamTarget {
  const doc = vertexCredentialSchema.parse({ project: "router-test-project", region: "europe-west4", service_account: JSON.stringify(account) });
  return target({
    providerSlug: "vertex",
    baseUrl: CATALOG_BASE,
    modelId: "google/gemini-2.5-flash",
    upstreamModel: "gemini-2.5-flash",
    apiKey: "",
    cloud: { provider: "vertex", ...doc },
    region: "europe-west4",
    ...overrides,
  });
}

const claudeOf = (account: ServiceAccountKey, region = "us-east5") =>
  vertexTarget(account, { modelId: "anthropic/claude-sonnet-4.5", upstreamModel: "claude-sonnet-4-5@20250929", region, maxOutputTokens: 64000 });

const offline = testServiceAccount({ tokenUri: "http://127.0.0.1:9/token" }).key;

describe("Vertex AI URLs", () => {
  it("puts the region in the host and the path of the catalog's base URL, and drops it from the global host", () => {
    expect(vertexApiRoot(CATALOG_BASE, "europe-west4")).toBe("https://europe-west4-aiplatform.googleapis.com/v1");
    expect(vertexApiRoot(CATALOG_BASE, "global")).toBe("https://aiplatform.googleapis.com/v1");
    expect(vertexApiRoot("http://127.0.0.1:4000/v1/", "us-central1")).toBe("http://127.0.0.1:4000/v1");
    expect(vertexApiRoot("http://127.0.0.1:4000", "us-central1")).toBe("http://127.0.0.1:4000/v1");
  });

  it("addresses Gemini per region, streamed as SSE, without the Gemini API's key header", () => {
    const gemini = adapterFor("google", "vertex")!;
    const eu = gemini.buildRequest(chat({ max_tokens: 100 }), vertexTarget(offline), false);
    expect(eu.url.toString()).toBe(
      "https://europe-west4-aiplatform.googleapis.com/v1/projects/router-test-project/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent",
    );
    expect(eu.headers["x-goog-api-key"]).toBeUndefined();
    expect(eu.headers.authorization).toBeUndefined();
    expect(bodyOf(eu)).toMatchObject({ contents: [{ role: "user", parts: [{ text: "Hi" }] }], generationConfig: { maxOutputTokens: 100 } });
    const us = gemini.buildRequest(chat({}), vertexTarget(offline, { region: "us-central1" }), true);
    expect(us.url.toString()).toBe(
      "https://us-central1-aiplatform.googleapis.com/v1/projects/router-test-project/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    );
  });

  it("falls back to the credential's region when the endpoint names none", () => {
    const req = adapterFor("google", "vertex")!.buildRequest(chat({}), vertexTarget(offline, { region: null }), false);
    expect(req.url.pathname).toContain("/locations/europe-west4/");
    expect(req.url.host).toBe("europe-west4-aiplatform.googleapis.com");
  });
});

describe("a service account's token_uri", () => {
  it("is used only when it is Google's, or on the operator's own Vertex base URL: an organisation cannot point the gateway at a host", async () => {
    expect(tokenUriAllowed(undefined, CATALOG_BASE)).toBe(true);
    expect(tokenUriAllowed("https://oauth2.googleapis.com/token", CATALOG_BASE)).toBe(true);
    expect(tokenUriAllowed("https://oauth2-psc1.p.googleapis.com/token", CATALOG_BASE)).toBe(true);
    for (const uri of ["http://oauth2.googleapis.com/token", "https://ledger:8085/v1/credits", "https://oauth2.googleapis.com.evil.example/token", "not a url"]) {
      expect([uri, tokenUriAllowed(uri, CATALOG_BASE)]).toEqual([uri, false]);
    }
    expect(tokenUriAllowed("http://127.0.0.1:4000/token", "http://127.0.0.1:4000/v1")).toBe(true);
    expect(tokenUriAllowed("http://127.0.0.1:4001/token", "http://127.0.0.1:4000/v1")).toBe(false);

    // The adapter refuses before minting anything.
    const elsewhere = testServiceAccount({ tokenUri: "https://metadata.internal/token" }).key;
    const adapter = adapterFor("google", "vertex") as ProviderAdapter;
    const t = vertexTarget(elsewhere);
    const err = await adapter.authorize!(adapter.buildRequest(chat({}), t, false), t, new AbortController().signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamAuthError);
    expect((err as UpstreamAuthError).reason).toBe("token_uri_not_google");
  });
});

describe("Claude on Vertex AI", () => {
  const claude = adapterFor("anthropic", "vertex")!;

  it("sends Anthropic's body without model, with Vertex's anthropic_version, to rawPredict and streamRawPredict", () => {
    const whole = claude.buildRequest(chat({ max_tokens: 200 }), claudeOf(offline), false);
    expect(whole.url.toString()).toBe(
      "https://us-east5-aiplatform.googleapis.com/v1/projects/router-test-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict",
    );
    expect(bodyOf(whole)).toEqual({ anthropic_version: VERTEX_ANTHROPIC_VERSION, max_tokens: 200, messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }] });
    expect(whole.headers["x-api-key"]).toBeUndefined();
    expect(whole.headers["anthropic-version"]).toBeUndefined();
    const streamed = claude.buildRequest(chat({ max_tokens: 200 }), claudeOf(offline), true);
    expect(streamed.url.pathname.endsWith(":streamRawPredict")).toBe(true);
    expect(bodyOf(streamed).stream).toBe(true);
  });

  it("keeps a Messages body's cache markers and passes beta flags as the anthropic-beta header", () => {
    const native = {
      model: "claude-sonnet-4-5",
      max_tokens: 300,
      system: [{ type: "text", text: "Long instructions", cache_control: { type: "ephemeral", ttl: "1h" } }],
      messages: [{ role: "user", content: [{ type: "text", text: "Hi", cache_control: { type: "ephemeral" } }] }],
    };
    const req = claude.buildNativeRequest!(native, chat({}), { ...claudeOf(offline), vendorBeta: "context-1m-2025-08-07" }, false);
    const body = bodyOf(req);
    expect(body.model).toBeUndefined();
    expect(body.anthropic_version).toBe(VERTEX_ANTHROPIC_VERSION);
    expect(body.system[0].cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
    expect(body.messages[0].content[0].cache_control).toEqual({ type: "ephemeral" });
    expect(req.headers["anthropic-beta"]).toBe("context-1m-2025-08-07");
  });

  it("fits thinking to the model as Anthropic's adapter does, reading the @-dated id", () => {
    // Claude Sonnet 4.5 takes a thinking budget, not adaptive thinking: sent as a budget.
    const native = { max_tokens: 4000, thinking: { type: "adaptive" }, messages: [{ role: "user", content: "Hi" }] };
    const body = bodyOf(claude.buildNativeRequest!(native, chat({}), claudeOf(offline), false));
    expect(body.thinking.type).toBe("enabled");
    expect(body.thinking.budget_tokens).toBeGreaterThanOrEqual(1024);
  });

  it("decodes Anthropic's events from streamRawPredict", async () => {
    const sse = [
      'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"usage":{"input_tokens":9,"output_tokens":1}}}\n\n',
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}\n\n',
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}\n\n',
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ].join("");
    const got = collect(await decodeStream(claude, sse));
    expect(got.content).toBe("Hello");
    expect(got.finishes).toEqual([{ finish: "stop", native: "end_turn" }]);
    expect(got.usage).toMatchObject({ prompt: 9, completion: 2 });
  });
});

describe("Vertex AI errors", () => {
  const gemini = adapterFor("google", "vertex")!;
  it("reads Google's status name as the code, and Anthropic's error type for Claude's own refusals", () => {
    expect(gemini.parseError('{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}')).toEqual({ code: "RESOURCE_EXHAUSTED", message: "Quota exceeded" });
    expect(gemini.parseError('[{"error":{"code":503,"message":"busy","status":"UNAVAILABLE"}}]')).toEqual({ code: "UNAVAILABLE", message: "busy" });
    expect(adapterFor("anthropic", "vertex")!.parseError('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')).toEqual({
      code: "overloaded_error",
      message: "Overloaded",
    });
    expect(gemini.parseError('{"error":{"code":404,"message":"gone"}}')).toEqual({ code: "404", message: "gone" });
    expect(gemini.parseError("<html>bad gateway</html>")).toEqual({ code: null, message: "<html>bad gateway</html>" });
  });
});

describe("Vertex AI embeddings", () => {
  const embeddings = adapterFor("google", "vertex")!.embeddings!;
  const embedTarget = (model: string) => vertexTarget(offline, { modelId: `google/${model}`, upstreamModel: model, region: "us-central1" });

  it("predicts with instances and outputDimensionality, and reads the vectors and token counts", () => {
    const req = embeddings.buildRequest({ input: ["a b", "c"], dimensions: 4, encodingFormat: "float" }, embedTarget("text-embedding-005"));
    expect(req.url.pathname).toBe("/v1/projects/router-test-project/locations/us-central1/publishers/google/models/text-embedding-005:predict");
    expect(bodyOf(req)).toEqual({ instances: [{ content: "a b" }, { content: "c" }], parameters: { outputDimensionality: 4 } });
    const parsed = embeddings.parse(
      { predictions: [{ embeddings: { values: [0.1, 0.2], statistics: { token_count: 2 } } }, { embeddings: { values: [0.3, 0.4], statistics: { token_count: 1 } } }] },
      2,
    );
    expect(parsed).toEqual({ vectors: [[0.1, 0.2], [0.3, 0.4]], promptTokens: 3 });
    expect(() => embeddings.parse({ predictions: [] }, 1)).toThrow("0 embeddings for 1 inputs");
  });

  it("refuses more than one text for gemini-embedding-001, which Vertex AI takes one at a time", () => {
    expect(String(thrown(() => embeddings.buildRequest({ input: ["a", "b"], encodingFormat: "float" }, embedTarget("gemini-embedding-001"))))).toContain("one text a request");
    expect(bodyOf(embeddings.buildRequest({ input: ["a"], encodingFormat: "float" }, embedTarget("gemini-embedding-001")))).toEqual({ instances: [{ content: "a" }] });
  });
});

describe("Vertex AI access tokens, against the fake's token endpoint", () => {
  let fake: FakeVertex;
  beforeAll(async () => {
    fake = await startFakeVertex();
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  const send = async (req: UpstreamHttpRequest) => {
    const res = await fetch(req.url, { method: "POST", headers: req.headers, body: req.body });
    return { status: res.status, json: (await res.json()) as unknown };
  };
  const loopback = (t: UpstreamTarget): UpstreamTarget => ({ ...t, baseUrl: fake.url });
  const signal = new AbortController().signal;

  it("mints one token for two requests, and the fake serves Gemini and Claude with it", async () => {
    const adapters = vertexAdapters(new VertexAccessTokens());
    const account = fake.serviceAccount();
    const before = fake.minted();
    const gemini = async (adapter: ProviderAdapter, t: UpstreamTarget) => adapter.authorize!(adapter.buildRequest(chat({ max_tokens: 50 }), t, false), t, signal);
    const first = await gemini(adapters.google, loopback(vertexTarget(account)));
    const second = await gemini(adapters.anthropic, loopback(claudeOf(account, "europe-west1")));
    expect(fake.minted() - before).toBe(1);
    expect(first.headers.authorization).toMatch(/^Bearer ya29\.fake-/);
    expect(second.headers.authorization).toBe(first.headers.authorization);

    fake.script({ text: "Hallo aus Europa." }, { text: "Hello from Claude." });
    const geminiAnswer = await send(first);
    expect(geminiAnswer.status).toBe(200);
    expect(adapters.google.parseCompletion(geminiAnswer.json).choices[0]?.message.content).toBe("Hallo aus Europa.");
    const claudeAnswer = await send(second);
    expect(claudeAnswer.status).toBe(200);
    expect(adapters.anthropic.parseCompletion(claudeAnswer.json).choices[0]?.message.content).toBe("Hello from Claude.");
    expect(fake.modelRequests().map((r) => r.path.split("/")[5])).toEqual(["europe-west4", "europe-west1"]);
  });

  it("gives a request without a token the fake's 401, and another project its 403", async () => {
    const adapters = vertexAdapters(new VertexAccessTokens());
    const t = loopback(vertexTarget(fake.serviceAccount()));
    const unsigned = await send(adapters.google.buildRequest(chat({}), t, false));
    expect(unsigned.status).toBe(401);
    expect(adapters.google.parseError(JSON.stringify(unsigned.json)).code).toBe("UNAUTHENTICATED");
    const other = { ...t, cloud: { ...(t.cloud as Extract<UpstreamTarget["cloud"], { provider: "vertex" }>), project: "someone-elses-project" } };
    const refused = await send(await adapters.google.authorize!(adapters.google.buildRequest(chat({}), other, false), other, signal));
    expect(refused.status).toBe(403);
    expect(adapters.google.parseError(JSON.stringify(refused.json)).code).toBe("PERMISSION_DENIED");
  });

  it("turns a refused mint into UpstreamAuthError with a short reason that never carries the key", async () => {
    const stranger = testServiceAccount({ tokenUri: fake.tokenUri }).key;
    const adapters = vertexAdapters(new VertexAccessTokens());
    const t = loopback(vertexTarget(stranger));
    let err: unknown;
    try {
      await adapters.google.authorize!(adapters.google.buildRequest(chat({}), t, false), t, signal);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UpstreamAuthError);
    expect((err as UpstreamAuthError).reason).toBe("token_refused_400");
    const keyBody = stranger.private_key.split("\n")[1] as string;
    expect(JSON.stringify(err, Object.getOwnPropertyNames(err))).not.toContain(keyBody);
    expect((err as Error).cause).toBeUndefined();
  });

  it("keeps at most maxClients token clients, dropping the least recently used", async () => {
    let made = 0;
    const createSource = (): AccessTokenSource => {
      const token = `token-${++made}`;
      return { accessToken: () => Promise.resolve(token) };
    };
    const tokens = new VertexAccessTokens({ maxClients: 2, createSource });
    const [a, b, c] = [0, 1, 2].map(() => testServiceAccount({ tokenUri: fake.tokenUri }).key);
    const sa = (k: ServiceAccountKey) => vertexCredentialSchema.parse({ project: "router-test-project", region: "us-central1", service_account: k }).service_account;
    expect(await tokens.token(sa(a!), signal)).toBe("token-1");
    expect(await tokens.token(sa(b!), signal)).toBe("token-2");
    expect(await tokens.token(sa(a!), signal)).toBe("token-1");
    expect(await tokens.token(sa(c!), signal)).toBe("token-3");
    expect(tokens.size).toBe(2);
    // b was the least recently used: it needs a new client; a still has its own.
    expect(await tokens.token(sa(a!), signal)).toBe("token-1");
    expect(await tokens.token(sa(b!), signal)).toBe("token-4");
    expect(made).toBe(4);
  });
});
