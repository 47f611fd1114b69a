import { createPostgresDb } from "@router/db";
import { CLIENT_OPTIONS, insecure } from "@router/grpc-kit";
import { health, routing } from "@router/proto";
import type { Clock } from "@router/money";
import { waitFor } from "@router/testkit";
import { importCatalog } from "../src/catalog/import";
import { fixtureCatalog } from "./catalog-fixture";
import { startRouting } from "../src/app";
import { CatalogSnapshot } from "../src/catalog/catalog-snapshot";
import { loadCatalog } from "../src/catalog/catalog-store";
import { HealthSnapshot } from "../src/health/health-snapshot";
import { plan } from "../src/plan/plan";
import { silentLog, startHarness, type Harness } from "./routing-harness";

const ALL = ["alpha", "beta", "gamma", "local"];
// The price sort keeps the expected orders deterministic; the draw has tests of its own (ranking.test.ts).
const BY_PRICE = routing.ProviderPreferences.fromPartial({ sort: "price" });

const route = (res: routing.PlanResponse) => res.cascade.map((c) => `${c.modelRank}:${c.modelId}@${c.providerSlug}`);

describe("RoutingService.Plan over the fixture catalog", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ catalog: fixtureCatalog(), providerBaseUrls: { gamma: "http://127.0.0.1:9999/v1" } });
  });
  afterAll(async () => {
    await h.close();
  });

  it("routes a single model directly to its endpoints, cheapest first under the price sort", async () => {
    const res = await h.plan({ orgId: "org_1", model: "acme/one", byokProviders: ALL, provider: BY_PRICE });

    expect(res.strategy).toBe("direct");
    expect(res.refusal).toBeUndefined();
    expect(route(res)).toEqual(["1:acme/one@gamma", "1:acme/one@alpha", "1:acme/one@beta"]);
  });

  it("returns everything the gateway needs to dispatch and price a candidate", async () => {
    const res = await h.plan({ model: "acme/one", byokProviders: ["alpha", "beta"], provider: BY_PRICE });
    const [alpha, beta] = res.cascade;

    expect(alpha).toEqual({
      modelId: "acme/one",
      providerSlug: "alpha",
      // The catalog's display name: the gateway carries it to the request's record.
      providerName: "Alpha",
      endpointId: "ep_alpha_one",
      apiFamily: "openai",
      baseUrl: "https://api.alpha.example/v1",
      upstreamModel: "alpha-one",
      price: {
        promptPerMillion: 1_000_000_000n,
        completionPerMillion: 2_000_000_000n,
        cachedPromptPerMillion: 500_000_000n,
        cacheWrite5mPerMillion: 1_250_000_000n,
        cacheWrite1hPerMillion: 2_000_000_000n,
        priceVersionId: expect.any(BigInt),
      },
      maxOutputTokens: 4096,
      contextLength: 32768,
      quantization: "",
      modelRank: 1,
      supportedParameters: ["max_tokens", "temperature"],
      pinned: false,
      // The fixture declares no region.
      deploymentRegion: "",
    });
    expect(alpha!.price!.priceVersionId).toBeGreaterThan(0n);
    expect(beta).toMatchObject({ apiFamily: "anthropic", price: { cachedPromptPerMillion: 0n } });
  });

  it("applies a provider base URL override", async () => {
    const res = await h.plan({ model: "acme/one", byokProviders: ["gamma"] });
    expect(res.cascade[0]?.baseUrl).toBe("http://127.0.0.1:9999/v1");
  });

  it("keeps only endpoints whose provider the organisation holds a credential for", async () => {
    const res = await h.plan({ model: "acme/one", byokProviders: ["beta", "elsewhere"] });
    expect(route(res)).toEqual(["1:acme/one@beta"]);
  });

  it("walks model, then models, then account fallbacks, cut to three distinct models", async () => {
    const res = await h.plan({
      model: "acme/two",
      models: ["acme/three", "acme/two", "acme/four"],
      accountFallbackModels: ["acme/one"],
      byokProviders: ALL,
    });

    expect(res.strategy).toBe("fallback");
    expect(route(res)).toEqual(["1:acme/two@alpha", "2:acme/three@beta", "3:acme/four@gamma"]);
    expect(res.beyondFallbackDepth).toBe(3);
  });

  it("counts a model with no credentialed endpoint toward the depth", async () => {
    const res = await h.plan({
      model: "other/alone",
      models: ["acme/two", "acme/four", "acme/one"],
      byokProviders: ["alpha", "gamma"],
    });

    expect(route(res)).toEqual(["2:acme/two@alpha", "3:acme/four@gamma"]);
    expect(res.beyondFallbackDepth).toBe(2);
  });

  it("means the catalog row when an id with a variant suffix is listed", async () => {
    const res = await h.plan({ model: "acme/five:free", byokProviders: ALL });
    expect(res.cascade.map((c) => c.endpointId)).toEqual(["ep_alpha_five-free"]);
  });

  it("splits off a variant suffix when no row has the full id, and applies it", async () => {
    for (const variant of ["nitro", "floor"]) {
      const res = await h.plan({ model: `acme/one:${variant}`, byokProviders: ["alpha"] });
      expect(route(res)).toEqual(["1:acme/one@alpha"]);
    }
    // acme/one's alpha endpoint is neither free nor lists tools.
    for (const variant of ["free", "exacto"]) {
      const res = await h.plan({ model: `acme/one:${variant}`, byokProviders: ["alpha"] });
      // Together the two constraints emptied the set.
      expect(res.refusal).toMatchObject({ code: "no_route", unsatisfiedFilters: ["byok_credential", `variant:${variant}`] });
      // Credentials are checked first: the other hosts are refused for the credential, alpha for the variant.
      expect(res.refused.map((r) => `${r.providerSlug}:${r.constraint}`).sort()).toEqual(
        ["alpha:variant:" + variant, "beta:byok_credential", "gamma:byok_credential"],
      );
    }
  });

  it("does not split a suffix that is not a variant", async () => {
    const res = await h.plan({ model: "acme/one:turbo", byokProviders: ALL });
    expect(res.refusal).toMatchObject({ code: "model_not_found" });
  });

  it("treats a model and its variant as one model in the chain", async () => {
    const res = await h.plan({ model: "acme/two", models: ["acme/two:nitro", "acme/four"], byokProviders: ALL });
    expect(route(res)).toEqual(["1:acme/two@alpha", "2:acme/four@gamma"]);
  });

  it("resolves a ~author/family alias to the family's latest row", async () => {
    const res = await h.plan({ model: "~acme/family", byokProviders: ALL });
    expect(res.strategy).toBe("latest");
    expect(route(res)).toEqual(["1:acme/family-latest@gamma"]);
    const unknown = await h.plan({ model: "~acme/nothing", byokProviders: ALL });
    expect(unknown.refusal?.code).toBe("model_not_found");
  });

  it("reports unknown slugs and routes the ones it knows; they take no place in the depth", async () => {
    const res = await h.plan({
      model: "acme/ghost",
      models: ["acme/two", "nobody/else", "acme/three", "acme/four"],
      byokProviders: ALL,
    });

    expect(res.unresolvedModels).toEqual(["acme/ghost", "nobody/else"]);
    expect(res.refusal).toBeUndefined();
    expect(route(res)).toEqual(["1:acme/two@alpha", "2:acme/three@beta", "3:acme/four@gamma"]);
  });

  it("refuses with model_not_found naming every slug when none resolves", async () => {
    const res = await h.plan({ model: "acme/ghost", models: ["nobody/else"], byokProviders: ALL });

    expect(res.cascade).toEqual([]);
    expect(res.refusal).toEqual({
      httpStatus: 404,
      code: "model_not_found",
      message: "model not found: acme/ghost, nobody/else",
      unsatisfiedFilters: [],
    });
    expect(res.unresolvedModels).toEqual(["acme/ghost", "nobody/else"]);
  });

  it("refuses with invalid_request when no model is named at all", async () => {
    const res = await h.plan({ model: "", models: ["  "], byokProviders: ALL });

    expect(res.cascade).toEqual([]);
    expect(res.refusal).toMatchObject({ httpStatus: 400, code: "invalid_request" });
    expect(res.refusal?.message.startsWith("model: required")).toBe(true);
  });

  it("refuses with no_route naming the providers that serve the model when no credential matches", async () => {
    const res = await h.plan({ model: "acme/one", byokProviders: ["local"] });

    expect(res.cascade).toEqual([]);
    expect(res.refusal).toEqual({
      httpStatus: 404,
      code: "no_route",
      message:
        "no enabled provider credential can serve acme/one: add a provider key for one of the providers " +
        "serving it: Gamma (gamma), Alpha (alpha), Beta (beta)",
      unsatisfiedFilters: ["byok_credential"],
    });
  });

  it("refuses with no_route when the organisation holds no credential at all", async () => {
    const res = await h.plan({ model: "other/alone", models: ["acme/two"], byokProviders: [] });
    expect(res.refusal?.code).toBe("no_route");
    expect(res.refusal?.message).toContain("other/alone, acme/two");
    expect(res.refusal?.message).toContain("Beta (beta), Alpha (alpha)");
  });

  it("answers grpc.health.v1 Check with SERVING", async () => {
    const client = new health.HealthClient(`127.0.0.1:${h.service.grpcPort}`, insecure(), CLIENT_OPTIONS);
    try {
      for (const service of ["", "router.routing.v1.RoutingService"]) {
        const res = await new Promise<health.HealthCheckResponse>((resolve, reject) =>
          client.check({ service }, (err, r) => (err ? reject(err) : resolve(r))),
        );
        expect(res.status).toBe(health.HealthCheckResponse_ServingStatus.SERVING);
      }
    } finally {
      client.close();
    }
  });
});

describe("the catalog behind Plan", () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ catalog: fixtureCatalog() });
  });
  afterEach(async () => {
    await h.close();
  });

  it("plans from memory without a database round trip", async () => {
    await h.db.close();
    const res = await h.plan({ model: "acme/one", byokProviders: ["alpha"] });
    expect(route(res)).toEqual(["1:acme/one@alpha"]);
    // The harness closes the pool again on teardown; give it a fresh one.
    h.db = createPostgresDb({ url: h.database.url, schema: "routing" });
  });

  it("sees a price change at once when the import runs in this process", async () => {
    const changed = fixtureCatalog();
    changed.endpoints.find((e) => e.id === "ep_alpha_two")!.pricing.prompt = 7;

    await importCatalog(h.db, changed, h.clock);

    const res = await h.plan({ model: "acme/two", byokProviders: ["alpha"] });
    expect(res.cascade[0]?.price?.promptPerMillion).toBe(7_000_000_000n);
  });

  it("carries each endpoint's own supported parameters, and a changed list once it is imported", async () => {
    const catalog = fixtureCatalog();
    catalog.endpoints.find((e) => e.id === "ep_alpha_one")!.supported_parameters = ["max_tokens", "tools", "tool_choice"];
    catalog.endpoints.find((e) => e.id === "ep_beta_one")!.supported_parameters = [];
    await importCatalog(h.db, catalog, h.clock);

    const before = await h.plan({ model: "acme/one", byokProviders: ["alpha", "beta"], provider: BY_PRICE });
    expect(before.cascade.map((c) => [c.providerSlug, c.supportedParameters])).toEqual([
      ["alpha", ["max_tokens", "tools", "tool_choice"]],
      ["beta", []],
    ]);

    catalog.endpoints.find((e) => e.id === "ep_alpha_one")!.supported_parameters = ["max_tokens"];
    await importCatalog(h.db, catalog, h.clock);

    const after = await h.plan({ model: "acme/one", byokProviders: ["alpha"] });
    expect(after.cascade[0]?.supportedParameters).toEqual(["max_tokens"]);
  });

  it("picks up another process's import once the snapshot is older than 30 seconds", async () => {
    const before = await h.plan({ model: "acme/two", byokProviders: ["alpha"] });
    const changed = fixtureCatalog();
    changed.endpoints.find((e) => e.id === "ep_alpha_two")!.pricing.prompt = 9;
    await importFromAnotherProcess(h.database.url, changed, h.clock);

    h.clock.advance(29_000);
    expect((await h.plan({ model: "acme/two", byokProviders: ["alpha"] })).cascade[0]?.price).toEqual(before.cascade[0]?.price);

    h.clock.advance(2_000);
    await waitFor(
      async () =>
        (await h.plan({ model: "acme/two", byokProviders: ["alpha"] })).cascade[0]?.price?.promptPerMillion ===
        9_000_000_000n,
      { what: "the new price to reach Plan" },
    );
  });

  it("imports the bundled catalog only when the catalog is empty", async () => {
    const restarted = await startRouting({
      db: h.db,
      log: silentLog,
      clock: h.clock,
      httpPort: 0,
      grpcPort: 0,
    });
    try {
      const imports = await h.db.query<{ n: bigint }>("SELECT count(*) AS n FROM catalog_imports");
      expect(imports.rows[0]?.n).toBe(1n);
      const res = await fetch(`http://127.0.0.1:${restarted.httpPort}/v1/models/openai/gpt-4o`);
      expect(res.status).toBe(404);
    } finally {
      await restarted.close();
    }
  });
});

describe("Plan over the bundled catalog", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  it("offers Llama 3.3 70B from the credentialed hosts, cheapest first", async () => {
    const res = await h.plan({ model: "meta-llama/llama-3.3-70b-instruct", byokProviders: ["together", "fireworks", "groq"], provider: BY_PRICE });
    expect(res.cascade.map((c) => c.providerSlug)).toEqual(["groq", "together", "fireworks"]);
    expect(res.cascade[0]).toMatchObject({ baseUrl: "https://api.groq.com/openai/v1", upstreamModel: "llama-3.3-70b-versatile" });
  });

  it("sends Claude through the Anthropic wire family", async () => {
    const res = await h.plan({ model: "anthropic/claude-sonnet-4", byokProviders: ["anthropic"] });
    expect(res.cascade[0]).toMatchObject({
      apiFamily: "anthropic",
      baseUrl: "https://api.anthropic.com/v1",
      price: { promptPerMillion: 3_000_000_000n, completionPerMillion: 15_000_000_000n },
    });
  });

  it("tells the gateway what a reasoning model refuses: o3 lists reasoning but no temperature", async () => {
    const res = await h.plan({ model: "openai/o3", byokProviders: ["openai"] });
    const params = res.cascade[0]?.supportedParameters;
    expect(params).toEqual(expect.arrayContaining(["reasoning", "tools", "structured_outputs"]));
    expect(params).not.toContain("temperature");
    expect(params).not.toContain("top_p");
  });

  it("routes an embeddings request to embedding models only, priced per prompt token", async () => {
    const res = await h.plan({
      model: "openai/text-embedding-3-small",
      models: ["google/gemini-embedding-001"],
      byokProviders: ["openai", "google", "anthropic"],
      operation: "embeddings",
    });
    expect(res.refusal).toBeUndefined();
    expect(res.cascade.map((c) => `${c.modelId}@${c.providerSlug}`)).toEqual([
      "openai/text-embedding-3-small@openai",
      "google/gemini-embedding-001@google",
    ]);
    expect(res.cascade[0]).toMatchObject({ apiFamily: "openai", upstreamModel: "text-embedding-3-small", price: { promptPerMillion: 20_000_000n, completionPerMillion: 0n } });
    expect(res.cascade[1]).toMatchObject({ apiFamily: "google", upstreamModel: "gemini-embedding-001" });
  });

  it("refuses a chat model for embeddings and an embedding model for chat with a 400 naming the model", async () => {
    const chatModel = await h.plan({ model: "openai/gpt-4o-mini", byokProviders: ["openai"], operation: "embeddings" });
    expect(chatModel.cascade).toEqual([]);
    expect(chatModel.refusal).toMatchObject({ httpStatus: 400, code: "invalid_request" });
    expect(chatModel.refusal?.message).toContain("model: openai/gpt-4o-mini is not an embedding model");

    const inChain = await h.plan({ model: "openai/text-embedding-3-small", models: ["anthropic/claude-sonnet-4"], byokProviders: ["openai", "anthropic"], operation: "embeddings" });
    expect(inChain.refusal?.message).toContain("anthropic/claude-sonnet-4 is not an embedding model");

    const embeddingForChat = await h.plan({ model: "openai/text-embedding-3-small", byokProviders: ["openai"] });
    expect(embeddingForChat.refusal).toMatchObject({ httpStatus: 400, code: "invalid_request" });
    expect(embeddingForChat.refusal?.message).toContain("is an embedding model; send it to POST /v1/embeddings");
  });

  it("leaves the account's fallback models of the other kind out", async () => {
    const res = await h.plan({
      model: "openai/text-embedding-3-small",
      accountFallbackModels: ["openai/gpt-4o-mini"],
      byokProviders: ["openai"],
      operation: "embeddings",
    });
    expect(res.cascade.map((c) => c.modelId)).toEqual(["openai/text-embedding-3-small"]);
    const chat = await h.plan({ model: "openai/gpt-4o-mini", accountFallbackModels: ["openai/text-embedding-3-small"], byokProviders: ["openai"] });
    expect(chat.cascade.map((c) => c.modelId)).toEqual(["openai/gpt-4o-mini"]);
  });

  it("answers in well under a millisecond of server time per plan", async () => {
    // Not a benchmark: a coarse guard that Plan stays an in-memory computation.
    const snapshot = new CatalogSnapshot(await loadCatalog(h.db));
    const req = routing.PlanRequest.fromPartial({
      model: "meta-llama/llama-3.3-70b-instruct",
      models: ["deepseek/deepseek-chat", "openai/gpt-4o"],
      byokProviders: ["groq", "together", "fireworks", "deepseek", "openai"],
    });
    for (let i = 0; i < 2000; i += 1) plan(req, { catalog: snapshot, seed: `warm${i}` });
    const start = process.hrtime.bigint();
    for (let i = 0; i < 1000; i += 1) plan(req, { catalog: snapshot, seed: `s${i}` });
    const perCallUs = Number(process.hrtime.bigint() - start) / 1000 / 1000;
    expect(perCallUs).toBeLessThan(300);
  });

  it("stays in well under a millisecond while endpoints are demoted for recent failures", async () => {
    const snapshot = new CatalogSnapshot(await loadCatalog(h.db));
    const failing = ["groq", "together"].map((p) => ({
      endpointId: snapshot.endpointsOf("meta-llama/llama-3.3-70b-instruct").find((r) => r.provider.slug === p)!.endpoint.id,
      recentAttempts: 10,
      recentFailures: 9,
      dayAttempts: 10,
      dayFailures: 9,
      dayTtftSumMs: 0,
      dayTtftCount: 0,
      dayOutputTokens: 0,
      dayGenerationMs: 0,
      dayToolCalls: 0,
      dayInvalidToolCalls: 0,
    }));
    const health = new HealthSnapshot(failing);
    const req = routing.PlanRequest.fromPartial({
      model: "meta-llama/llama-3.3-70b-instruct",
      models: ["deepseek/deepseek-chat", "openai/gpt-4o"],
      byokProviders: ["groq", "together", "fireworks", "deepseek", "openai"],
      provider: BY_PRICE,
    });

    expect(plan(req, { catalog: snapshot, health, seed: "s" }).cascade.slice(0, 3).map((c) => c.providerSlug)).toEqual(["fireworks", "groq", "together"]);
    for (let i = 0; i < 2000; i += 1) plan(req, { catalog: snapshot, health, seed: `warm${i}` });
    const start = process.hrtime.bigint();
    for (let i = 0; i < 1000; i += 1) plan(req, { catalog: snapshot, health, seed: `s${i}` });
    const perCallUs = Number(process.hrtime.bigint() - start) / 1000 / 1000;
    expect(perCallUs).toBeLessThan(300);
  });
});

/**
 * Imports the way another process (the CLI) would: a fresh copy of the import module has its own
 * import signal, so the cache under test is not told and must notice the new revision itself.
 */
async function importFromAnotherProcess(url: string, catalog: unknown, clock: Clock): Promise<void> {
  let isolated: typeof import("../src/catalog/import") | undefined;
  jest.isolateModules(() => {
    isolated = require("../src/catalog/import");
  });
  const db = createPostgresDb({ url, schema: "routing" });
  try {
    await isolated!.importCatalog(db, catalog, clock);
  } finally {
    await db.close();
  }
}
