import { createPostgresDb, type Db } from "@router/db";
import { DomainError } from "@router/errors";
import { ManualClock } from "@router/money";
import { createTestDatabase, type TestDatabase } from "@router/testkit";
import { migrateRouting } from "../src/app";
import { loadCatalog } from "../src/catalog/catalog-store";
import { BUNDLED_CATALOG_FILE, importCatalog, parseCatalogFile, readCatalogFile } from "../src/catalog/import";
import { resolveModel } from "../src/plan/model-resolution";
import { fixtureCatalog } from "./catalog-fixture";
import { memoryCatalog } from "./memory-catalog";
import { startHarness, type Harness } from "./routing-harness";

/** The fixture with provider ids as aliases: acme/one is served by its author as `one-2025` and `one`. */
function aliasedCatalog(aliases: Record<string, string[]> = { "acme/one": ["one-2025", "one"], "acme/two": ["two"] }) {
  const catalog = fixtureCatalog();
  for (const m of catalog.models) Object.assign(m, { aliases: aliases[m.id] ?? [] });
  return catalog;
}

function refusal(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error("expected the catalog to be refused");
}

describe("catalog aliases at import", () => {
  it("refuses an alias another model already has, naming the entry", () => {
    const err = refusal(() => parseCatalogFile(aliasedCatalog({ "acme/one": ["one"], "acme/three": ["three", "one"] })));
    expect(err.status).toBe(400);
    expect(err.message).toBe("catalog: models[2] (acme/three).aliases[1]: alias one is already an alias of acme/one");
  });

  it("refuses an alias written like a catalog id, which it could shadow", () => {
    const err = refusal(() => parseCatalogFile(aliasedCatalog({ "acme/one": ["acme/two"] })));
    expect(err.message).toContain("models[0] (acme/one).aliases.0");
  });

  it("gives the bundled catalog's Anthropic models their dated and dateless ids, and OpenAI's theirs", () => {
    const file = readCatalogFile(BUNDLED_CATALOG_FILE);
    const aliases = (id: string) => file.models.find((m) => m.id === id)?.aliases;
    expect(aliases("anthropic/claude-sonnet-4.5")).toEqual(["claude-sonnet-4-5-20250929", "claude-sonnet-4-5"]);
    expect(aliases("anthropic/claude-haiku-4.5")).toEqual(["claude-haiku-4-5-20251001", "claude-haiku-4-5"]);
    expect(aliases("openai/gpt-4o-mini")).toEqual(["gpt-4o-mini"]);
    expect(aliases("google/gemini-2.5-pro")).toEqual(["gemini-2.5-pro"]);
    // Claude Code 2.1's own defaults (main model and its haiku model).
    expect(aliases("anthropic/claude-opus-5.5")).toEqual(["claude-opus-5-5"]);
    expect(aliases("anthropic/claude-haiku-5.5")).toEqual(["claude-haiku-5-5"]);
    // Each author-served alias is that author's endpoint's own model id.
    for (const m of file.models) {
      const own = file.endpoints.filter((e) => e.model === m.id).map((e) => e.upstream_model);
      if (m.aliases.length) expect(own.some((u) => m.aliases.includes(u))).toBe(true);
    }
  });
});

describe("catalog aliases in the store", () => {
  let database: TestDatabase;
  let db: Db;
  const clock = new ManualClock(new Date("2025-11-01T12:00:00.000Z"));

  beforeAll(async () => {
    database = await createTestDatabase("routingaliases");
    db = createPostgresDb({ url: database.url, schema: "routing" });
    await migrateRouting(db);
  });

  afterAll(async () => {
    await db.close();
    await database.drop();
  });

  it("keeps aliases through import and load, and counts a changed alias list as a changed model", async () => {
    await importCatalog(db, aliasedCatalog(), clock);
    const rows = await loadCatalog(db);
    expect(rows.models.find((m) => m.id === "acme/one")?.aliases).toEqual(["one-2025", "one"]);
    expect(rows.models.find((m) => m.id === "acme/three")?.aliases).toEqual([]);
    expect((await importCatalog(db, aliasedCatalog(), clock)).modelsChanged).toBe(0);
    const changed = await importCatalog(db, aliasedCatalog({ "acme/one": ["one"] }), clock);
    expect(changed.modelsChanged).toBe(2);
  });
});

describe("resolving a provider's own model id", () => {
  const catalog = memoryCatalog(
    [
      { model: "acme/chat", provider: "cheap", prompt: 1, completion: 1 },
      { model: "acme/solo", provider: "mid", prompt: 1, completion: 1 },
    ],
    [],
    // `acme/solo` as an alias of acme/chat cannot pass an import; here it shows an id winning.
    { "acme/chat": ["chat-2025", "chat", "acme/solo"] },
  );

  it.each([
    ["chat-2025", { modelId: "acme/chat", variant: null, alias: false }],
    ["chat", { modelId: "acme/chat", variant: null, alias: false }],
    ["chat:nitro", { modelId: "acme/chat", variant: "nitro", alias: false }],
    ["acme/solo", { modelId: "acme/solo", variant: null, alias: false }],
    ["chat-2024", null],
  ])("resolves %s", (entry, expected) => {
    expect(resolveModel(entry, catalog)).toEqual(expected);
  });
});

describe("models by id over HTTP", () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ catalog: aliasedCatalog() });
  });

  afterAll(async () => {
    await h.close();
  });

  const anthropicGet = async (path: string) => {
    const res = await fetch(h.baseUrl + path, { headers: { "anthropic-version": "2023-06-01" } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it.each(["/v1/models/acme/one", "/v1/models/acme%2Fone", "/v1/models/one", "/v1/models/one-2025"])(
    "answers %s with the Model object the OpenAI SDK reads, and the catalog's fields beside it",
    async (path) => {
      const { status, body } = await h.get(path);
      expect(status).toBe(200);
      expect(body).toMatchObject({ id: "acme/one", object: "model", created: 1_700_000_000, owned_by: "acme", name: "Acme One" });
      expect(body.aliases).toEqual(["one-2025", "one"]);
      expect(body).not.toHaveProperty("data");
      expect(body).not.toHaveProperty("pricing");
    },
  );

  it("answers 404 in the error envelope for a name that is neither an id nor an alias", async () => {
    for (const path of ["/v1/models/acme/nothing", "/v1/models/acme%2Fnothing", "/v1/models/nothing"]) {
      const { status, body } = await h.get(path);
      expect(status).toBe(404);
      expect(body.error).toMatchObject({ status: 404, code: "not_found" });
    }
  });

  it("lists a model's endpoints by an encoded id or an alias as by its plain id", async () => {
    const plain = await h.get("/v1/models/acme/one/endpoints");
    expect(plain.body.data).toHaveLength(3);
    expect((await h.get("/v1/models/acme%2Fone/endpoints")).body).toEqual(plain.body);
    expect((await h.get("/v1/models/one/endpoints")).body).toEqual(plain.body);
  });

  it("lists models as OpenAI's list object with each row a Model", async () => {
    const { body } = await h.get("/v1/models?q=acme/two");
    expect(body.object).toBe("list");
    expect(body.data[0]).toMatchObject({ id: "acme/two", object: "model", owned_by: "acme", aliases: ["two"] });
  });

  it("answers an Anthropic client in the Models API shape, by id or alias", async () => {
    for (const path of ["/v1/models/acme%2Fone", "/v1/models/one-2025"]) {
      const { status, body } = await anthropicGet(path);
      expect(status).toBe(200);
      expect(body).toEqual({
        type: "model",
        id: "acme/one",
        display_name: "Acme One",
        created_at: "2023-11-14T22:13:20Z",
        aliases: ["one-2025", "one"],
      });
    }
  });

  it("pages an Anthropic client's model list newest first with after_id and before_id", async () => {
    const first = await anthropicGet("/v1/models?limit=2");
    expect(first.body).toMatchObject({ has_more: true, first_id: "acme/family-latest", last_id: "acme/four" });
    expect((first.body.data as Array<{ type: string }>).every((m) => m.type === "model")).toBe(true);
    const next = await anthropicGet("/v1/models?limit=2&after_id=acme/four");
    expect(next.body).toMatchObject({ first_id: "acme/three", last_id: "acme/two", has_more: true });
    const back = await anthropicGet("/v1/models?limit=2&before_id=acme/three");
    expect(back.body).toMatchObject({ first_id: "acme/family-latest", last_id: "acme/four", has_more: false });
    const last = await anthropicGet("/v1/models?limit=100&after_id=acme/four");
    expect(last.body.has_more).toBe(false);
    expect((await anthropicGet("/v1/models?after_id=acme/ghost")).status).toBe(400);
  });
});
