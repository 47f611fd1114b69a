import { fixtureCatalog } from "./catalog-fixture";
import { startHarness, type Harness } from "./routing-harness";

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ catalog: fixtureCatalog() });
});

afterAll(async () => {
  await h.close();
});

const ids = (body: { data: Array<{ id: string }> }) => body.data.map((m) => m.id);

describe("GET /v1/models", () => {
  it("lists every model sorted by id with the total", async () => {
    const { status, body } = await h.get("/v1/models");
    expect(status).toBe(200);
    expect(body.total).toBe(9);
    expect(ids(body)).toEqual([
      "acme/family-latest",
      "acme/five",
      "acme/five:free",
      "acme/four",
      "acme/one",
      "acme/three",
      "acme/two",
      "other/alone",
      "zeta/open",
    ]);
  });

  it("pages with limit and offset while total counts every match", async () => {
    const { body } = await h.get("/v1/models?limit=2&offset=3");
    expect(ids(body)).toEqual(["acme/four", "acme/one"]);
    expect(body.total).toBe(9);
  });

  it("shows the cheapest endpoint's price as USD per token strings and per million numbers", async () => {
    const { body } = await h.get("/v1/models?q=acme/one");
    expect(body.data).toHaveLength(1);
    expect(body.data[0].pricing).toEqual({
      prompt: "0.0000005",
      completion: "0.000001",
      prompt_per_million: 0.5,
      completion_per_million: 1,
    });
  });

  it("prices a model by its hosted endpoints rather than a free self-hosted one", async () => {
    const { body } = await h.get("/v1/models?q=zeta");
    expect(body.data[0].pricing).toMatchObject({ prompt: "0.0000002", completion: "0.0000004" });
  });

  it("returns the Model fields", async () => {
    const { body } = await h.get("/v1/models?q=Acme%20Three");
    expect(body.data[0]).toEqual({
      id: "acme/three",
      object: "model",
      owned_by: "acme",
      aliases: [],
      canonical_slug: "acme/three",
      name: "Acme Three",
      created: 1_720_000_000,
      description: "Acme Three for tests",
      context_length: 200_000,
      architecture: { modality: "text->text", input_modalities: ["text"], output_modalities: ["text"] },
      supported_parameters: ["max_tokens", "temperature"],
      default_parameters: null,
      resale_permitted: "unknown",
      byok_only: true,
      is_free: false,
      deprecation_date: null,
      pricing: expect.objectContaining({ prompt_per_million: 2 }),
    });
  });

  it("matches q case-insensitively against name or id", async () => {
    expect(ids((await h.get("/v1/models?q=ALONE")).body)).toEqual(["other/alone"]);
    expect(ids((await h.get("/v1/models?q=five%20(free")).body)).toEqual(["acme/five:free"]);
  });

  it("filters by a comma list of authors", async () => {
    expect(ids((await h.get("/v1/models?model_authors=zeta,%20other")).body)).toEqual(["other/alone", "zeta/open"]);
  });

  it("filters by minimum context length", async () => {
    expect(ids((await h.get("/v1/models?context=150000")).body)).toEqual(["acme/three", "other/alone"]);
  });

  it.each([
    ["created", ["acme/family-latest", "acme/four", "acme/three"]],
    ["context_length", ["other/alone", "acme/three", "acme/one"]],
    ["price", ["acme/five:free", "zeta/open", "acme/one"]],
    ["name", ["acme/family-latest", "acme/five", "acme/five:free"]],
    ["no-such-sort", ["acme/family-latest", "acme/five", "acme/five:free"]],
  ])("sorts by %s", async (sort, firstThree) => {
    expect(ids((await h.get(`/v1/models?sort=${sort}&limit=3`)).body)).toEqual(firstThree);
  });

  it.each([
    ["limit=0", "limit"],
    ["limit=501", "limit"],
    ["limit=ten", "limit"],
    ["offset=-1", "offset"],
    ["context=1.5", "context"],
    ["limit=1&limit=2", "limit"],
  ])("answers 400 naming the parameter for %s", async (query, field) => {
    const { status, body } = await h.get(`/v1/models?${query}`);
    expect(status).toBe(400);
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.message.startsWith(`${field}:`)).toBe(true);
    expect(body.error.details.field).toBe(field);
  });
});

describe("GET /v1/models/{author}/{slug}", () => {
  it("returns the model without pricing", async () => {
    const { status, body } = await h.get("/v1/models/acme/one");
    expect(status).toBe(200);
    expect(body.id).toBe("acme/one");
    expect(body).not.toHaveProperty("pricing");
  });

  it("reads a row whose id carries a variant suffix", async () => {
    const { body } = await h.get("/v1/models/acme/five:free");
    expect(body).toMatchObject({ id: "acme/five:free", is_free: true });
  });

  it("answers 404 in the error envelope for an unknown model", async () => {
    const { status, body } = await h.get("/v1/models/acme/nothing");
    expect(status).toBe(404);
    expect(body.error).toMatchObject({ status: 404, code: "not_found", message: "model acme/nothing not found" });
  });
});

describe("GET /v1/models/{author}/{slug}/endpoints", () => {
  it("lists every provider serving the model, cheapest first, with prices and empty health figures", async () => {
    const { status, body } = await h.get("/v1/models/acme/one/endpoints");
    expect(status).toBe(200);
    expect(body.data.map((e: { provider: string }) => e.provider)).toEqual(["gamma", "alpha", "beta"]);
    expect(body.data[1]).toEqual({
      endpoint_id: "ep_alpha_one",
      model_id: "acme/one",
      provider: "alpha",
      provider_name: "Alpha",
      upstream_model: "alpha-one",
      context_length: 32768,
      max_output_tokens: 4096,
      quantization: null,
      supported_parameters: ["max_tokens", "temperature"],
      pricing: {
        prompt: "0.000001",
        completion: "0.000002",
        input_cache_read: "0.0000005",
        input_cache_write: "0.00000125",
        input_cache_write_1h: "0.000002",
        prompt_per_million: 1,
        completion_per_million: 2,
      },
      uptime: null,
      latency_ms: null,
      tool_call_reliability: null,
    });
  });

  it("answers 404 for an unknown model", async () => {
    expect((await h.get("/v1/models/nobody/nothing/endpoints")).status).toBe(404);
  });
});

describe("GET /v1/providers", () => {
  it("lists providers with the Provider fields only", async () => {
    const { body } = await h.get("/v1/providers");
    expect(body.data.map((p: { slug: string }) => p.slug)).toEqual(["alpha", "beta", "gamma", "local"]);
    expect(body.data[0]).toEqual({
      slug: "alpha",
      name: "Alpha",
      hq_country: "US",
      datacenters: ["US"],
      privacy_policy_url: "https://alpha.example/privacy",
      tos_url: null,
      status_page_url: null,
    });
  });
});

describe("the bundled catalog over HTTP", () => {
  let bundled: Harness;
  beforeAll(async () => {
    bundled = await startHarness();
  });
  afterAll(async () => {
    await bundled.close();
  });

  it("is loaded on first start and prices GPT-4o at its list price", async () => {
    const { body } = await bundled.get("/v1/models?q=openai/gpt-4o-mini");
    expect(body.data[0].pricing).toMatchObject({ prompt: "0.00000015", completion: "0.0000006" });
    const gpt4o = await bundled.get("/v1/models/openai/gpt-4o/endpoints");
    expect(gpt4o.body.data[0].pricing).toMatchObject({ prompt: "0.0000025", completion: "0.00001" });
  });

  it("lists the eleven providers and the three clouds", async () => {
    const { body } = await bundled.get("/v1/providers");
    expect(body.data).toHaveLength(14);
  });
});
