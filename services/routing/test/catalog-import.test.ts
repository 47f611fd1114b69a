import { createPostgresDb, type Db } from "@router/db";
import { DomainError } from "@router/errors";
import { fromUsd, ManualClock } from "@router/money";
import { createTestDatabase, type TestDatabase } from "@router/testkit";
import { migrateRouting } from "../src/app";
import { loadCatalog } from "../src/catalog/catalog-store";
import { BUNDLED_CATALOG_FILE, importCatalog, parseCatalogFile, readCatalogFile } from "../src/catalog/import";
import { fixtureCatalog } from "./catalog-fixture";

let database: TestDatabase;
let db: Db;
const clock = new ManualClock(new Date("2025-11-01T12:00:00.000Z"));

beforeAll(async () => {
  database = await createTestDatabase("routingimport");
  db = createPostgresDb({ url: database.url, schema: "routing" });
  await migrateRouting(db);
});

afterAll(async () => {
  await db.close();
  await database.drop();
});

beforeEach(async () => {
  await db.query(
    "TRUNCATE catalog_imports, price_versions, endpoints, models, providers RESTART IDENTITY CASCADE",
  );
});

async function priceVersions(endpointId: string) {
  const r = await db.query<{ id: bigint; prompt_per_million: bigint; current: boolean }>(
    `SELECT pv.id, pv.prompt_per_million, e.price_version_id = pv.id AS current
       FROM price_versions pv JOIN endpoints e ON e.id = pv.endpoint_id
      WHERE pv.endpoint_id = $1 ORDER BY pv.id`,
    [endpointId],
  );
  return r.rows;
}

function expectCatalogError(fn: () => unknown, text: string) {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).status).toBe(400);
    expect((err as DomainError).message).toContain(text);
    return;
  }
  throw new Error("expected the catalog to be refused");
}

describe("the bundled catalog", () => {
  it("validates and lists the real providers with a few dozen models", () => {
    const file = readCatalogFile(BUNDLED_CATALOG_FILE);
    expect(file.providers.map((p) => p.slug).sort()).toEqual(
      ["anthropic", "azure", "bedrock", "deepseek", "fireworks", "google", "groq", "mistral", "ollama", "openai", "together", "vertex", "vllm", "xai"],
    );
    expect(file.models.length).toBeGreaterThanOrEqual(25);
    expect(file.models.length).toBeLessThanOrEqual(50);
    // Embedding models say so in their output modalities, and cost prompt tokens only.
    const embedding = file.models.filter((m) => m.architecture?.output_modalities.includes("embeddings")).map((m) => m.id);
    expect(embedding.sort()).toEqual([
      "amazon/titan-embed-text-v2",
      "cohere/embed-english-v3",
      "cohere/embed-multilingual-v3",
      "google/gemini-embedding-001",
      "openai/text-embedding-3-large",
      "openai/text-embedding-3-small",
    ]);
    for (const e of file.endpoints.filter((x) => embedding.includes(x.model))) expect(e.completion).toBe(0n);
    expect(file.endpoints.filter((e) => embedding.includes(e.model)).map((e) => e.provider)).not.toContain("anthropic");
    const llama = file.endpoints.filter((e) => e.model === "meta-llama/llama-3.3-70b-instruct").map((e) => e.provider);
    expect(llama).toEqual(expect.arrayContaining(["groq", "together", "fireworks", "vllm"]));
    const gpt4o = file.endpoints.find((e) => e.id === "ep_openai_gpt-4o");
    expect(gpt4o?.prompt).toBe(2_500_000_000n);
    expect(gpt4o?.completion).toBe(10_000_000_000n);
  });

  it("lists Anthropic's cache-write prices: 1.25x the prompt price for five minutes, 2x for an hour", () => {
    const file = readCatalogFile(BUNDLED_CATALOG_FILE);
    const anthropic = file.endpoints.filter((e) => e.provider === "anthropic");
    expect(anthropic.length).toBeGreaterThan(0);
    for (const e of anthropic) {
      expect([e.id, e.cacheWrite5m]).toEqual([e.id, (e.prompt * 5n) / 4n]);
      expect([e.id, e.cacheWrite1h]).toEqual([e.id, e.prompt * 2n]);
    }
    expect(file.endpoints.find((e) => e.id === "ep_openai_gpt-4o")?.cacheWrite5m).toBeNull();
  });

  const CLOUDS = new Set(["azure", "bedrock", "vertex"]);

  it("declares what each provider's endpoints do with data: Router's defaults, the same for all of a provider's endpoints", () => {
    const file = readCatalogFile(BUNDLED_CATALOG_FILE);
    const byProvider = new Map<string, string>();
    for (const e of file.endpoints) {
      // A cloud's region is a property of each deployment: every one declares its own.
      const cloud = CLOUDS.has(e.provider);
      if (cloud) expect([e.id, e.deployment_region]).toEqual([e.id, expect.stringMatching(/^[a-z][a-z0-9-]+$/)]);
      const declared = JSON.stringify([e.zdr, e.no_training, cloud ? "each endpoint's" : e.deployment_region]);
      expect([e.id, byProvider.get(e.provider) ?? declared]).toEqual([e.id, declared]);
      byProvider.set(e.provider, declared);
    }
    expect(Object.fromEntries([...byProvider].map(([p, d]) => [p, JSON.parse(d) as unknown]))).toEqual({
      openai: [false, true, "us"],
      anthropic: [false, true, "us"],
      google: [false, false, "us"],
      mistral: [false, false, "eu"],
      groq: [true, true, null],
      deepseek: [false, false, "cn"],
      xai: [false, true, "us"],
      together: [false, true, "us"],
      fireworks: [true, true, "us"],
      vllm: [true, true, null],
      ollama: [true, true, null],
      azure: [false, true, "each endpoint's"],
      // Bedrock neither stores nor logs prompts and completions, and trains no model on them.
      bedrock: [true, true, "each endpoint's"],
      // Vertex AI caches Gemini's inputs and outputs for up to 24 hours unless the project turns it off.
      vertex: [false, true, "each endpoint's"],
    });
  });
});

describe("importCatalog", () => {
  it("imports every provider, model and endpoint with one price version each", async () => {
    const result = await importCatalog(db, fixtureCatalog(), clock);

    expect(result).toMatchObject({ providersChanged: 4, modelsChanged: 9, endpointsChanged: 12, priceVersionsAdded: 12 });
    const versions = await priceVersions("ep_alpha_one");
    expect(versions).toEqual([{ id: expect.anything(), prompt_per_million: fromUsd(1), current: true }]);
  });

  it("changes nothing when the same file is imported again", async () => {
    await importCatalog(db, fixtureCatalog(), clock);
    clock.advance(60_000);

    const again = await importCatalog(db, JSON.stringify(fixtureCatalog()), clock);

    expect(again).toMatchObject({
      providersChanged: 0,
      modelsChanged: 0,
      endpointsChanged: 0,
      priceVersionsAdded: 0,
      deactivated: 0,
    });
    const count = await db.query<{ n: bigint }>("SELECT count(*) AS n FROM price_versions");
    expect(count.rows[0]?.n).toBe(12n);
  });

  it("adds a price version for an endpoint whose price changed and points the endpoint at it", async () => {
    await importCatalog(db, fixtureCatalog(), clock);
    const changed = fixtureCatalog();
    changed.endpoints[0]!.pricing.prompt = 1.25;

    const result = await importCatalog(db, changed, clock);

    expect(result.priceVersionsAdded).toBe(1);
    expect(result.endpointsChanged).toBe(0);
    const versions = await priceVersions("ep_alpha_one");
    expect(versions.map((v) => [v.prompt_per_million, v.current])).toEqual([
      [fromUsd(1), false],
      [fromUsd(1.25), true],
    ]);
  });

  it("treats a new cached-prompt price as a price change", async () => {
    await importCatalog(db, fixtureCatalog(), clock);
    const changed = fixtureCatalog();
    changed.endpoints[1]!.pricing.cached_prompt = 0.1;

    expect((await importCatalog(db, changed, clock)).priceVersionsAdded).toBe(1);
  });

  it("treats a new cache-write price as a price change, and a re-import of it as none", async () => {
    await importCatalog(db, fixtureCatalog(), clock);
    const changed = fixtureCatalog();
    changed.endpoints[1]!.pricing.cache_write_1h = 9;

    expect((await importCatalog(db, changed, clock)).priceVersionsAdded).toBe(1);
    expect((await importCatalog(db, changed, clock)).priceVersionsAdded).toBe(0);
    const stored = await db.query<{ w5: bigint | null; w1: bigint | null }>(
      `SELECT pv.cache_write_5m_per_million AS w5, pv.cache_write_1h_per_million AS w1
         FROM endpoints e JOIN price_versions pv ON pv.id = e.price_version_id WHERE e.id = $1`,
      [changed.endpoints[1]!.id],
    );
    expect(stored.rows[0]).toEqual({ w5: null, w1: 9_000_000_000n });
  });

  it("stores what an endpoint declares about data (undeclared: no ZDR, may train, no region) and counts a change", async () => {
    const declared = fixtureCatalog();
    Object.assign(declared.endpoints[0]!, { zdr: true, no_training: true, deployment_region: "EU-West" });
    await importCatalog(db, declared, clock);

    const rows = (await loadCatalog(db)).endpoints;
    const policy = (id: string) => {
      const e = rows.find((r) => r.id === id)!;
      return [e.zdr, e.noTraining, e.deploymentRegion];
    };
    expect(policy("ep_alpha_one")).toEqual([true, true, "eu-west"]);
    expect(policy("ep_beta_one")).toEqual([false, false, null]);

    Object.assign(declared.endpoints[0]!, { zdr: false });
    expect((await importCatalog(db, declared, clock)).endpointsChanged).toBe(1);
  });

  it("deactivates rows that the new file no longer lists and revives them when they return", async () => {
    await importCatalog(db, fixtureCatalog(), clock);
    const smaller = fixtureCatalog();
    smaller.endpoints = smaller.endpoints.filter((e) => e.model !== "other/alone");
    smaller.models = smaller.models.filter((m) => m.id !== "other/alone");

    expect((await importCatalog(db, smaller, clock)).deactivated).toBe(2);
    const inactive = await db.query<{ id: string }>("SELECT id FROM models WHERE NOT active");
    expect(inactive.rows).toEqual([{ id: "other/alone" }]);

    const back = await importCatalog(db, fixtureCatalog(), clock);
    expect(back).toMatchObject({ modelsChanged: 1, endpointsChanged: 1, priceVersionsAdded: 0 });
  });

  it("records each import as a new catalog revision", async () => {
    const first = await importCatalog(db, fixtureCatalog(), clock);
    const second = await importCatalog(db, fixtureCatalog(), clock);
    expect(second.revision).toBe(first.revision + 1n);
  });
});

describe("a bad catalog file", () => {
  it("names the entry and field of a bad price", () => {
    const bad = fixtureCatalog();
    (bad.endpoints[3]!.pricing as { prompt: unknown }).prompt = "cheap";
    expectCatalogError(() => parseCatalogFile(bad), "endpoints[3] (ep_alpha_two).pricing.prompt");
  });

  it("names an endpoint that points at an unknown provider", () => {
    const bad = fixtureCatalog();
    bad.endpoints[2]!.provider = "nobody";
    expectCatalogError(() => parseCatalogFile(bad), "endpoints[2] (ep_gamma_one).provider: unknown provider nobody");
  });

  it("names a duplicate model id", () => {
    const bad = fixtureCatalog();
    bad.models.push({ ...bad.models[0]! });
    expectCatalogError(() => parseCatalogFile(bad), "models[9].id: duplicate id acme/one");
  });

  it("names a model that no endpoint serves", () => {
    const bad = fixtureCatalog();
    bad.endpoints = bad.endpoints.filter((e) => e.model !== "acme/two");
    expectCatalogError(() => parseCatalogFile(bad), "models[1] (acme/two): no endpoint serves this model");
  });

  it("names an unknown field, catching typos", () => {
    const bad = fixtureCatalog();
    (bad.providers[1] as Record<string, unknown>).base_ulr = "https://x.example";
    expectCatalogError(() => parseCatalogFile(bad), "providers[1] (beta)");
  });

  it("refuses text that is not JSON", () => {
    expectCatalogError(() => parseCatalogFile("{ nope"), "catalog: not valid JSON");
  });

  it("leaves the stored catalog untouched", async () => {
    await importCatalog(db, fixtureCatalog(), clock);
    const bad = fixtureCatalog();
    bad.endpoints[0]!.pricing.prompt = -1;

    await expect(importCatalog(db, bad, clock)).rejects.toThrow("endpoints[0] (ep_alpha_one).pricing.prompt");
    expect(await priceVersions("ep_alpha_one")).toHaveLength(1);
  });
});
