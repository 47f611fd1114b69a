import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { gatewayClient, startFakeAzureOpenAi, startFakeEntra, startStack, streamedText, waitFor, type FakeEntra, type FakeUpstream, type RecordedRequest, type Stack } from "@router/testkit";

/**
 * Azure OpenAI through the separate-process stack: an organisation adds its resources in two
 * regions over the API and routes every ingress format to them, stream and not. The fake resource
 * refuses a wrong key, an unknown API version and an unknown deployment, as the service does.
 */

const EU_KEY = "eu-resource-key-0123456789abcdef";
const ENTRA = { tenantId: "7d1a8c3e-0000-4000-8000-00000000c0de", clientId: "router-gateway-app-0001", clientSecret: "entra-client-secret-AbCdEf0123" };
const US_KEY = "us-resource-key-fedcba9876543210";
const MODEL = "openai/gpt-4o-mini";
const user = (text: string) => [{ role: "user", content: text }];
const resource = (region: string, key: string, suffix: string) => ({
  endpoint: `https://contoso-${suffix}.openai.azure.com`,
  region,
  api_key: key,
  deployments: { [MODEL]: `mini-${suffix}`, "openai/text-embedding-3-small": `embed-${suffix}` },
});

describe("Azure OpenAI through the stack", () => {
  let stack: Stack;
  let azure: FakeUpstream;
  let entra: FakeEntra;
  let mgmt: ReturnType<typeof gatewayClient>;
  let client: ReturnType<typeof gatewayClient>;
  let inferenceKey: string;
  const sent = (): RecordedRequest => {
    const r = azure.requests[azure.requests.length - 1];
    if (!r) throw new Error("the fake resource received no request");
    return r;
  };

  beforeAll(async () => {
    entra = await startFakeEntra(ENTRA);
    azure = await startFakeAzureOpenAi({
      apiKeys: [EU_KEY, US_KEY],
      tokens: () => entra.tokens,
      deployments: { "mini-eu": "gpt-4o-mini", "mini-us": "gpt-4o-mini", "embed-eu": "text-embedding-3-small", "embed-us": "text-embedding-3-small" },
    });
    // The operator's base URL for Azure stands in for every resource's own host.
    // Entra ID speaks only HTTPS: the gateway trusts the fake's certificate as it would a private CA.
    stack = await startStack({ providerBaseUrls: { azure: azure.url }, extraEnv: { NODE_EXTRA_CA_CERTS: entra.caFile } });
    const org = await stack.createOrg("Azure shop");
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    for (const [region, key, suffix] of [["swedencentral", EU_KEY, "eu"], ["eastus2", US_KEY, "us"]] as const) {
      const added = await mgmt.post("/v1/provider-keys", { provider: "azure", name: `Azure ${suffix}`, azure: resource(region, key, suffix) });
      expect(added.status).toBe(201);
    }
    const created = await mgmt.post("/v1/keys", { name: "azure app" });
    inferenceKey = created.json.data.key as string;
    client = gatewayClient(stack.gatewayUrl, inferenceKey);
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await azure?.close();
    await entra?.close();
  });

  beforeEach(() => azure.reset());

  it("lists the resources with where they point and the key's last four characters, never the key", async () => {
    const list = await mgmt.get("/v1/provider-keys");
    expect(list.status).toBe(200);
    const eu = list.json.data.find((c: Record<string, any>) => c.name === "Azure eu");
    expect(eu).toMatchObject({
      provider_slug: "azure",
      key_hint: "cdef",
      settings: { endpoint: "https://contoso-eu.openai.azure.com", region: "swedencentral", api_version: "2024-10-21", auth: "api_key" },
    });
    expect(list.text).not.toContain(EU_KEY);
    expect(list.text).not.toContain(US_KEY);
  });

  it("refuses a credential document with a field missing or misplaced, naming it", async () => {
    const noDeployments = await mgmt.post("/v1/provider-keys", { provider: "azure", azure: { ...resource("swedencentral", EU_KEY, "eu"), deployments: {} } });
    expect(noDeployments.status).toBe(400);
    expect(noDeployments.json.error.message).toContain("azure.deployments");
    const keyOutside = await mgmt.post("/v1/provider-keys", { provider: "azure", api_key: EU_KEY });
    expect(keyOutside.status).toBe(400);
    expect(keyOutside.json.error.message).toMatch(/azure|api_key/);
    const notAzure = await mgmt.post("/v1/provider-keys", { provider: "azure", azure: { ...resource("swedencentral", EU_KEY, "eu"), endpoint: "https://metadata.internal" } });
    expect(notAzure.status).toBe(400);
    expect(notAzure.json.error.message).toContain("azure.endpoint");
    expect(JSON.stringify([noDeployments.json, keyOutside.json, notAzure.json])).not.toContain(EU_KEY);
  });

  it("serves chat completions from a deployment, with the API version and the resource's key", async () => {
    azure.script({ text: "Hej från Azure.", usage: { prompt: 9, completion: 4 } });
    const res = await client.post("/v1/chat/completions", { model: MODEL, messages: user("Hej"), max_tokens: 40 });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ model: MODEL, provider: "azure" });
    expect(res.json.choices[0].message.content).toBe("Hej från Azure.");
    const req = sent();
    expect(req.path).toMatch(/^\/openai\/deployments\/mini-(eu|us)\/chat\/completions$/);
    expect(req.query["api-version"]).toBe("2024-10-21");
    expect(req.headers["api-key"]).toBe(req.path.includes("mini-eu") ? EU_KEY : US_KEY);
    expect(req.headers.authorization).toBeUndefined();
  });

  it("streams chat completions with usage on the last chunk", async () => {
    azure.script({ chunks: ["Streamed ", "from ", "Azure"], usage: { prompt: 5, completion: 3 } });
    const res = await client.stream({ model: MODEL, messages: user("Hi") });
    expect(res.status).toBe(200);
    expect(streamedText(res.chunks)).toBe("Streamed from Azure");
    expect(res.chunks[res.chunks.length - 1].usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 3 });
    expect((sent().body as Record<string, unknown>).stream_options).toEqual({ include_usage: true });
  });

  it("serves the Responses API and Messages through the official SDKs, stream and not", async () => {
    const openai = new OpenAI({ apiKey: inferenceKey, baseURL: `${stack.gatewayUrl}/v1`, maxRetries: 0 });
    azure.script({ text: "Responses via Azure." });
    const answer = await openai.responses.create({ model: MODEL, input: "Hello", max_output_tokens: 100 });
    expect(answer.output_text).toBe("Responses via Azure.");
    azure.script({ chunks: ["Streamed ", "response."] });
    const stream = await openai.responses.create({ model: MODEL, input: "Hello", stream: true });
    let text = "";
    for await (const ev of stream) if (ev.type === "response.output_text.delta") text += ev.delta;
    expect(text).toBe("Streamed response.");

    const anthropic = new Anthropic({ apiKey: inferenceKey, baseURL: stack.gatewayUrl, maxRetries: 0 });
    azure.script({ text: "Messages via Azure." });
    const message = await anthropic.messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: "user", content: "Hello" }] });
    expect(message.content).toEqual([expect.objectContaining({ type: "text", text: "Messages via Azure." })]);
    azure.script({ chunks: ["Streamed ", "message."] });
    const streamed = await anthropic.messages.stream({ model: MODEL, max_tokens: 100, messages: [{ role: "user", content: "Hello" }] }).finalText();
    expect(streamed).toBe("Streamed message.");
    expect(azure.requests.every((r) => /^\/openai\/deployments\/mini-(eu|us)\/chat\/completions$/.test(r.path))).toBe(true);
  });

  it("serves embeddings from the embedding deployment", async () => {
    const res = await client.post("/v1/embeddings", { model: "openai/text-embedding-3-small", input: ["a", "b"] });
    expect(res.status).toBe(200);
    expect(res.json.data).toHaveLength(2);
    expect(sent().path).toMatch(/^\/openai\/deployments\/embed-(eu|us)\/embeddings$/);
  });

  it("names the missing deployment when the resources deploy no model the request asks for", async () => {
    const res = await client.post("/v1/chat/completions", { model: "openai/gpt-4o", messages: user("Hi") });
    expect(res.status).toBe(404);
    expect(res.json.error.message).toBe(
      "no deployment of openai/gpt-4o in the organisation's Azure OpenAI resources: add one to a credential's deployments (catalog model id = deployment name)",
    );
    expect(azure.requests).toHaveLength(0);
  });

  it("fails over from a throttled resource to the other region before the first byte", async () => {
    azure.script({ failure: { kind: "status", status: 429, code: "429", message: "Rate limit is exceeded." } }, { text: "Served by the other resource." });
    const res = await client.post("/v1/chat/completions", { model: MODEL, messages: user("Hi") });
    expect(res.status).toBe(200);
    expect(res.json.choices[0].message.content).toBe("Served by the other resource.");
    const [throttled, served] = azure.requests;
    expect(throttled?.headers["api-key"]).not.toBe(served?.headers["api-key"]);
    const record = await waitFor(
      async () => {
        const r = await mgmt.get(`/v1/activity/requests/${res.json.id as string}`);
        return r.status === 200 ? (r.json.data as Record<string, any>) : undefined;
      },
      { timeoutMs: 15_000, what: "the request's record" },
    );
    expect(record.attempts.map((a: Record<string, any>) => a.status)).toEqual(["error", "ok"]);
    expect(JSON.stringify(record)).not.toContain("Rate limit is exceeded");
  });

  it("with the privacy policy's regions [eu], stays in swedencentral, even when that resource is throttled", async () => {
    expect((await mgmt.put("/v1/privacy", { regions: ["eu"] })).status).toBe(200);
    try {
      for (let i = 0; i < 4; i++) {
        const res = await client.post("/v1/chat/completions", { model: MODEL, messages: user("Stay in the EU") });
        expect(res.status).toBe(200);
      }
      expect(azure.requests.map((r) => r.headers["api-key"])).toEqual([EU_KEY, EU_KEY, EU_KEY, EU_KEY]);
      azure.reset();
      azure.script({ failure: { kind: "status", status: 429, code: "429", message: "Rate limit is exceeded." } });
      const throttled = await client.post("/v1/chat/completions", { model: MODEL, messages: user("Stay in the EU") });
      expect(throttled.status).toBe(429);
      expect(azure.requests.map((r) => r.headers["api-key"])).toEqual([EU_KEY]);
    } finally {
      await mgmt.put("/v1/privacy", { regions: [] });
    }
  });

  it("gives a clear error for a resource that refuses the key, and never logs the key", async () => {
    const org = await stack.createOrg("Wrong key shop");
    const m = gatewayClient(stack.gatewayUrl, org.managementKey);
    const wrong = "wrong-resource-key-55555555";
    expect((await m.post("/v1/provider-keys", { provider: "azure", azure: { ...resource("swedencentral", wrong, "eu") } })).status).toBe(201);
    const key = (await m.post("/v1/keys", { name: "k" })).json.data.key as string;
    const res = await gatewayClient(stack.gatewayUrl, key).post("/v1/chat/completions", { model: MODEL, messages: user("Hi") });
    expect(res.status).toBe(502);
    expect(res.json.error.message).toContain("azure returned HTTP 401");
    expect(res.text).not.toContain(wrong);
    expect(stack.logs()).not.toContain(wrong);
  });

  describe("with Entra ID client credentials instead of a key", () => {
    const entraResource = (secret: string) => ({
      endpoint: "https://contoso-entra.openai.azure.com",
      region: "swedencentral",
      deployments: { [MODEL]: "mini-eu" },
      entra: { tenant_id: ENTRA.tenantId, client_id: ENTRA.clientId, client_secret: secret, authority_host: entra.authorityHost },
    });
    const orgWith = async (name: string, secret: string) => {
      const org = await stack.createOrg(name);
      const m = gatewayClient(stack.gatewayUrl, org.managementKey);
      const added = await m.post("/v1/provider-keys", { provider: "azure", azure: entraResource(secret) });
      expect(added.status).toBe(201);
      expect(added.json.data.settings).toMatchObject({ auth: "entra", client_id: ENTRA.clientId, tenant_id: ENTRA.tenantId });
      expect(added.text).not.toContain(secret);
      return gatewayClient(stack.gatewayUrl, (await m.post("/v1/keys", { name: "k" })).json.data.key as string);
    };

    it("sends a bearer token minted for Azure OpenAI's scope, and mints it once for many requests", async () => {
      const c = await orgWith("Entra shop", ENTRA.clientSecret);
      const before = entra.minted();
      for (const text of ["one", "two", "three"]) {
        azure.script({ text });
        const res = await c.post("/v1/chat/completions", { model: MODEL, messages: user("Hi") });
        expect([res.status, res.json.choices?.[0]?.message?.content]).toEqual([200, text]);
      }
      expect(entra.minted() - before).toBe(1);
      for (const r of azure.requests) {
        expect(entra.tokens.has((r.headers.authorization ?? "").replace("Bearer ", ""))).toBe(true);
        expect(r.headers["api-key"]).toBeUndefined();
      }
    });

    it("gives a clear error when Entra refuses the client secret, and never logs the secret", async () => {
      const secret = "wrong-entra-secret-9999999999";
      const c = await orgWith("Entra wrong secret", secret);
      const res = await c.post("/v1/chat/completions", { model: MODEL, messages: user("Hi") });
      expect(res.status).toBe(502);
      expect(res.json.error.message).toContain("azure credential could not be used (entra_token_refused)");
      expect(azure.requests).toHaveLength(0);
      expect(res.text + stack.logs()).not.toContain(secret);
    });
  });
});
