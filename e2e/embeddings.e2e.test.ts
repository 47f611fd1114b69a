import OpenAI from "openai";
import {
  fakeEmbedding,
  float32Base64,
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
 * `POST /v1/embeddings` as the official `openai` SDK sees it (`client.embeddings.create`), served by
 * the OpenAI embeddings API and the Gemini API's batchEmbedContents through the one pipeline: keys,
 * ceilings, routing to embedding models only, failover, settlement at the prompt price, activity.
 */

const SMALL = "openai/text-embedding-3-small";
const GEMINI = "google/gemini-embedding-001";
/** text-embedding-3-small's catalog price: $0.02 per million prompt tokens, in nanodollars. */
const SMALL_PRICE_PER_MILLION = 20_000_000n;

describe("POST /v1/embeddings through the openai SDK", () => {
  let stack: Stack;
  let openaiFake: FakeUpstream;
  let geminiFake: FakeUpstream;
  let anthropicFake: FakeUpstream;
  let mgmt: ReturnType<typeof gatewayClient>;
  let client: OpenAI;

  beforeAll(async () => {
    [openaiFake, geminiFake, anthropicFake] = await Promise.all([startFakeOpenAi(), startFakeGemini(), startFakeAnthropic()]);
    stack = await startStack({ providerBaseUrls: { openai: openaiFake.url, google: geminiFake.url, anthropic: anthropicFake.url } });
    const org = await stack.createOrg("Embeddings Co");
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    for (const provider of ["openai", "google", "anthropic"]) {
      expect((await mgmt.post("/v1/provider-keys", { provider, api_key: `sk-${provider}-embed-0001` })).status).toBe(201);
    }
    const created = await mgmt.post("/v1/keys", { name: "embeddings" });
    expect(created.status).toBe(201);
    client = new OpenAI({ apiKey: created.json.data.key as string, baseURL: `${stack.gatewayUrl}/v1`, maxRetries: 0 });
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([openaiFake, geminiFake, anthropicFake].map((f) => f?.close()));
  });

  beforeEach(() => {
    for (const f of [openaiFake, geminiFake, anthropicFake]) f.reset();
  });

  const activityRow = (id: string) =>
    waitFor(async () => {
      const r = await mgmt.get(`/v1/activity/requests/${id}`);
      return r.status === 200 && r.json.data?.usage_lines ? (r.json.data as Record<string, any>) : undefined;
    });

  it("embeds one text (the SDK's default base64, decoded by the SDK), with usage, cost and ingress in activity", async () => {
    openaiFake.script({ usage: { prompt: 1000, completion: 0 } });
    const res = await client.embeddings.create({ model: SMALL, input: "The quick brown fox" });
    expect(res.object).toBe("list");
    expect((res as unknown as { id: string }).id).toMatch(/^gen-/);
    expect(res.model).toBe(SMALL);
    expect(res.data).toHaveLength(1);
    expect(Array.from(res.data[0]!.embedding)).toEqual(fakeEmbedding("The quick brown fox"));
    expect(res.usage).toEqual({ prompt_tokens: 1000, total_tokens: 1000 });
    // The SDK asked for base64; the provider was asked for it too, so the vector passed through.
    expect(openaiFake.requests[0]?.path).toBe("/v1/embeddings");
    expect(openaiFake.requests[0]?.body).toEqual({ model: "text-embedding-3-small", input: ["The quick brown fox"], encoding_format: "base64" });

    const id = (res as unknown as { id: string }).id;
    const row = await activityRow(id);
    expect(row).toMatchObject({ ingress: "embeddings", served_model: SMALL, provider_slug: "openai", status: "complete", streamed: false });
    const lines = row.usage_lines as Array<{ kind: string; tokens: number; cost_nanodollars: string }>;
    expect(lines.find((l) => l.kind === "prompt")).toMatchObject({ tokens: 1000, cost_nanodollars: String((1000n * SMALL_PRICE_PER_MILLION) / 1_000_000n) });
    expect(lines.reduce((n, l) => n + BigInt(l.cost_nanodollars), 0n)).toBe(20_000n);
  });

  it("embeds a batch as floats and as base64, with dimensions and user sent on", async () => {
    const floats = await client.embeddings.create({ model: SMALL, input: ["alpha", "beta gamma"], encoding_format: "float", dimensions: 4, user: "u-42" });
    expect(floats.data.map((d) => d.index)).toEqual([0, 1]);
    expect(floats.data.map((d) => d.embedding)).toEqual([fakeEmbedding("alpha", 4), fakeEmbedding("beta gamma", 4)]);
    expect(floats.usage.prompt_tokens).toBe(3);
    expect(openaiFake.requests[0]?.body).toMatchObject({ input: ["alpha", "beta gamma"], dimensions: 4, user: "u-42", encoding_format: "float" });

    const b64 = await client.embeddings.create({ model: SMALL, input: ["alpha"], encoding_format: "base64" });
    expect(b64.data[0]?.embedding).toBe(float32Base64(fakeEmbedding("alpha")));
  });

  it("embeds through Gemini's batchEmbedContents, encoding its floats as base64 for the SDK", async () => {
    const res = await client.embeddings.create({ model: GEMINI, input: ["uno", "dos"], dimensions: 6 });
    expect(res.model).toBe(GEMINI);
    expect(res.data.map((d) => Array.from(d.embedding))).toEqual([fakeEmbedding("uno", 6), fakeEmbedding("dos", 6)]);
    // Gemini reports no tokens: about four bytes a token.
    expect(res.usage.prompt_tokens).toBe(2);
    expect(geminiFake.requests[0]?.path).toBe("/v1beta/models/gemini-embedding-001:batchEmbedContents");
    expect(geminiFake.requests[0]?.body).toEqual({
      requests: [
        { model: "models/gemini-embedding-001", content: { parts: [{ text: "uno" }] }, outputDimensionality: 6 },
        { model: "models/gemini-embedding-001", content: { parts: [{ text: "dos" }] }, outputDimensionality: 6 },
      ],
    });
  });

  it("fails over: OpenAI's 503 moves on to the fallback embedding model on Gemini", async () => {
    openaiFake.script({ failure: { kind: "status", status: 503 } });
    const res = await client.embeddings.create({ model: SMALL, input: "fallback please", models: [GEMINI] } as OpenAI.EmbeddingCreateParams);
    expect(res.model).toBe(GEMINI);
    expect(Array.from(res.data[0]!.embedding)).toEqual(fakeEmbedding("fallback please"));
    expect(openaiFake.requests).toHaveLength(1);
    expect(geminiFake.requests).toHaveLength(1);
    const row = await activityRow((res as unknown as { id: string }).id);
    expect(row).toMatchObject({ ingress: "embeddings", served_model: GEMINI, provider_slug: "google" });
  });

  it("refuses bad input with a 400 naming the field, and a chat model with a clear 400, before any provider is asked", async () => {
    const empty = await client.embeddings.create({ model: SMALL, input: [] }).catch((e: unknown) => e);
    expect(empty).toBeInstanceOf(OpenAI.BadRequestError);
    expect((empty as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: "invalid_request_error", param: "input", code: "invalid_request" });

    const tokens = await client.embeddings.create({ model: SMALL, input: [[1, 2, 3]] }).catch((e: unknown) => e);
    expect((tokens as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param: "input" });
    expect((tokens as Error).message).toContain("token arrays are not taken");

    const dims = await client.embeddings.create({ model: SMALL, input: "x", dimensions: -1 }).catch((e: unknown) => e);
    expect((dims as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param: "dimensions" });

    const chatModel = await client.embeddings.create({ model: "openai/gpt-4o-mini", input: "x" }).catch((e: unknown) => e);
    expect(chatModel).toBeInstanceOf(OpenAI.BadRequestError);
    expect((chatModel as Error).message).toContain("openai/gpt-4o-mini is not an embedding model");

    // Anthropic has no embedding model in the catalog, so none is offered there.
    const claude = await client.embeddings.create({ model: "anthropic/claude-sonnet-4", input: "x" }).catch((e: unknown) => e);
    expect(claude).toBeInstanceOf(OpenAI.BadRequestError);

    // And the other way round: an embedding model on the chat route.
    const viaChat = await client.chat.completions.create({ model: SMALL, messages: [{ role: "user", content: "Hi" }] }).catch((e: unknown) => e);
    expect(viaChat).toBeInstanceOf(OpenAI.BadRequestError);
    expect((viaChat as Error).message).toContain("is an embedding model; send it to POST /v1/embeddings");

    expect(openaiFake.requests).toHaveLength(0);
    expect(geminiFake.requests).toHaveLength(0);
    expect(anthropicFake.requests).toHaveLength(0);
  });

  it("refuses a key at its ceiling before any provider is asked", async () => {
    const created = await mgmt.post("/v1/keys", { name: "capped", limit: 0.000000001, limit_reset: "lifetime", limit_mode: "hard", include_byok_in_limit: true });
    const capped = new OpenAI({ apiKey: created.json.data.key as string, baseURL: `${stack.gatewayUrl}/v1`, maxRetries: 0 });
    openaiFake.script({ usage: { prompt: 5000, completion: 0 } });
    expect((await capped.embeddings.create({ model: SMALL, input: "spend" })).data).toHaveLength(1);
    const keyClient = gatewayClient(stack.gatewayUrl, created.json.data.key as string);
    await waitFor(async () => ((await keyClient.get("/v1/key")).json.data?.usage > 0 ? true : undefined));
    const before = openaiFake.requests.length;

    const refused = await capped.embeddings.create({ model: SMALL, input: "more" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((refused as InstanceType<typeof OpenAI.PermissionDeniedError>).error).toMatchObject({
      type: "permission_error",
      code: "budget_exceeded",
      details: { scope: "key" },
    });
    expect(openaiFake.requests.length).toBe(before);
  });
});
