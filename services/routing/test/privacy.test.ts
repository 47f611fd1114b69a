import type { Identity } from "@router/http-kit";
import { newIdentityKeys } from "@router/testkit";
import { routing } from "@router/proto";
import { fixtureCatalogWithDataPolicies } from "./catalog-fixture";
import { expectSoon, managementIdentity, orgIds, servedAcmeOne, signedCall, signedClient, startHarness, startReplicaPair, type Harness } from "./routing-harness";

const KEYS = newIdentityKeys();
const ALL = ["alpha", "beta", "gamma", "local"];
const KEY = "k".repeat(64);
const BY_PRICE = routing.ProviderPreferences.fromPartial({ sort: "price" });
const OFF = { zdr: false, zdr_groups: [], deny_training: false, regions: [] };

const newOrg = orgIds("privacy");
const served = servedAcmeOne;

describe("privacy policy", () => {
  let h: Harness;
  const as = (orgId: string, overrides: Partial<Identity> = {}) => {
    const client = signedClient(() => h.baseUrl, KEYS, managementIdentity(orgId, overrides));
    return {
      ...client,
      get: () => client.get("/v1/privacy"),
      put: (body: unknown) => client.put("/v1/privacy", body),
      preview: (body: unknown) => client.post("/v1/privacy/preview", body),
    };
  };
  const planAs = (orgId: string, over: Partial<routing.PlanRequest> = {}) =>
    h.plan({ orgId, model: "acme/one", byokProviders: ALL, provider: BY_PRICE, ...over });

  beforeAll(async () => {
    h = await startHarness({ catalog: fixtureCatalogWithDataPolicies(), identityKeys: KEYS.publicKeys });
  });
  afterAll(async () => {
    await h.close();
  });

  it("reads as all off before one is set, with the declared regions and the model authors by model count", async () => {
    const res = await as(newOrg(), { role: "readonly" }).get();
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      policy: OFF,
      eligibility: { available: 9, unavailable: 0 },
      regions: ["eu", "us"],
      groups: [
        { group: "acme", models: 7 },
        { group: "other", models: 1 },
        { group: "zeta", models: 1 },
      ],
    });
  });

  it("replaces the whole policy: an omitted field is off", async () => {
    const org = newOrg();
    const set = await as(org).put({ zdr: true, regions: ["US"] });
    expect(set.status).toBe(200);
    expect(set.body.data).toEqual({ policy: { ...OFF, zdr: true, regions: ["us"] }, eligibility: { available: 1, unavailable: 8 } });
    expect((await as(org).put({ deny_training: true })).body.data.policy).toEqual({ ...OFF, deny_training: true });
    expect((await as(org).get()).body.data.policy).toEqual({ ...OFF, deny_training: true });
    expect((await as(org).put({})).body.data.policy).toEqual(OFF);
  });

  it.each<[string, Record<string, unknown>]>([
    ["retention", { zdr: true, retention: "none" }],
    ["zdr", { zdr: "yes" }],
    ["regions.0", { regions: ["mars"] }],
    ["zdr_groups.0", { zdr_groups: ["nobody"] }],
    ["deny_training", { deny_training: null }],
  ])("answers 400 naming %s for %j and keeps the stored policy", async (field, body) => {
    const org = newOrg();
    await as(org).put({ zdr: true });
    const res = await as(org).put(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "invalid_request", details: { field } });
    expect((await as(org).get()).body.data.policy).toEqual({ ...OFF, zdr: true });
  });

  it("lets any role read and only owner or admin set or preview", async () => {
    const org = newOrg();
    expect((await as(org, { role: "member" }).put({ zdr: true })).status).toBe(403);
    expect((await as(org, { role: "member" }).preview({ zdr: true })).status).toBe(403);
    expect((await as(org, { role: "admin" }).put({ zdr: true })).status).toBe(200);
    expect((await as(org, { role: "member" }).get()).body.data.policy.zdr).toBe(true);
  });

  it("previews what a policy would leave without saving it", async () => {
    const org = newOrg();
    const res = await as(org).preview({ regions: ["eu"], zdr_groups: ["zeta"] });
    expect(res.status).toBe(200);
    expect(res.body.data.available).toBe(1);
    expect(res.body.data.unavailable).toBe(8);
    expect(res.body.data.excluded).toContainEqual({ model_id: "acme/two", constraints: ["privacy.regions"] });
    expect(res.body.data.excluded).toContainEqual({ model_id: "zeta/open", constraints: ["privacy.zdr_groups"] });
    expect((await as(org).get()).body.data.policy).toEqual(OFF);
    expect((await as(org).preview({ bogus: true })).body.error.details.field).toBe("bogus");
  });

  describe("enforcement in Plan", () => {
    it.each<[string, Record<string, unknown>, string[], Record<string, string>]>([
      ["zdr", { zdr: true }, ["alpha"], { beta: "privacy.zdr", gamma: "privacy.zdr" }],
      ["zdr_groups naming the model's author", { zdr_groups: ["acme"] }, ["alpha"], { beta: "privacy.zdr_groups", gamma: "privacy.zdr_groups" }],
      ["zdr_groups naming another author", { zdr_groups: ["zeta"] }, ["gamma", "alpha", "beta"], {}],
      ["regions (fails closed on an undeclared region)", { regions: ["eu"] }, ["beta"], { alpha: "privacy.regions", gamma: "privacy.regions" }],
    ])("%s", async (_name, policy, cascade, refused) => {
      const org = newOrg();
      await as(org).put(policy);
      const res = await planAs(org);
      expect(served(res)).toEqual(cascade);
      expect(Object.fromEntries(res.refused.filter((r) => r.modelId === "acme/one").map((r) => [r.providerSlug, r.constraint]))).toEqual(refused);
    });

    it("refuses with no_route naming the policy when nothing declares no-training", async () => {
      const org = newOrg();
      await as(org).put({ deny_training: true });
      const res = await planAs(org);
      expect(res.refusal).toMatchObject({ httpStatus: 404, code: "no_route", unsatisfiedFilters: ["privacy.deny_training"] });
    });

    it("intersects regions with a guardrail's allowed_data_regions", async () => {
      const org = newOrg();
      await as(org).put({ regions: ["eu", "us"] });
      expect(served(await planAs(org, { keyHash: KEY }))).toEqual(["alpha", "beta"]);
      const g = (await as(org).post("/v1/guardrails", { name: "us", allowed_data_regions: ["us"] })).body.data;
      await as(org).post(`/v1/guardrails/${g.id}/assignments`, { subject_type: "key", subject_id: KEY });
      expect(served(await planAs(org, { keyHash: KEY }))).toEqual(["alpha"]);
      await as(org).put({ regions: ["eu"] });
      const none = await planAs(org, { keyHash: KEY });
      expect(none.refusal?.code).toBe("no_route");
      expect([...(none.refusal?.unsatisfiedFilters ?? [])].sort()).toEqual(["guardrail.allowed_data_regions", "privacy.regions"]);
    });
  });
});

describe("privacy policy across routing replicas sharing Redis", () => {
  it("a policy set on one replica applies on the other at once", async () => {
    const pair = await startReplicaPair(fixtureCatalogWithDataPolicies(), KEYS);
    const org = newOrg();
    const planOnOther = async () => served(await pair.planOnOther({ orgId: org, model: "acme/one", byokProviders: ALL, provider: BY_PRICE }));
    try {
      expect(await planOnOther()).toEqual(["gamma", "alpha", "beta"]);
      await signedCall(pair.h.baseUrl, KEYS, "PUT", "/v1/privacy", managementIdentity(org), { zdr: true });
      await expectSoon(async () => (await planOnOther()).join() === "alpha", "the other replica still routed without the policy");
    } finally {
      await pair.close();
    }
  });
});

/**
 * The bundled catalog declares what each endpoint does with data (Router's defaults, which an
 * import replaces), so the privacy filters leave the endpoints that declare it rather than refusing
 * everything.
 */
describe("privacy policy over the bundled catalog", () => {
  let h: Harness;
  const LLAMA = "meta-llama/llama-3.3-70b-instruct";
  const HOSTS = ["groq", "together", "fireworks", "vllm", "ollama", "mistral", "deepseek", "openai", "google"];
  const as = (orgId: string) => signedClient(() => h.baseUrl, KEYS, managementIdentity(orgId));
  const providersOf = (res: routing.PlanResponse) => res.cascade.map((c) => c.providerSlug).sort();
  const refusedBy = (res: routing.PlanResponse) =>
    Object.fromEntries(res.refused.map((r) => [r.providerSlug, r.constraint]));

  beforeAll(async () => {
    h = await startHarness({ identityKeys: KEYS.publicKeys });
  });
  afterAll(async () => {
    await h.close();
  });

  it("lists the regions the bundled endpoints declare", async () => {
    // A cloud's own regions, and the areas they are in.
    expect((await as(newOrg()).get("/v1/privacy")).body.data.regions).toEqual([
      "cn",
      "eastus2",
      "eu",
      "eu-central-1",
      "eu-west-1",
      "europe-west1",
      "europe-west4",
      "swedencentral",
      "us",
      "us-central1",
      "us-east-1",
      "us-east5",
    ]);
  });

  it("with regions [eu], keeps a cloud's EU deployments (swedencentral) and refuses its US ones, which name their own region", async () => {
    const org = newOrg();
    expect((await as(org).put("/v1/privacy", { regions: ["eu"] })).status).toBe(200);
    const res = await h.plan({ orgId: org, model: "openai/gpt-4o-mini", byokProviders: ["azure", "openai"] });
    expect(res.cascade.map((c) => [c.endpointId, c.deploymentRegion])).toEqual([["ep_azure_gpt-4o-mini_swedencentral", "swedencentral"]]);
    expect(res.refused.map((r) => [r.endpointId, r.constraint]).sort()).toEqual([
      ["ep_azure_gpt-4o-mini_eastus2", "privacy.regions"],
      ["ep_openai_gpt-4o-mini", "privacy.regions"],
    ]);
    // A region by its own name: only that deployment.
    await as(org).put("/v1/privacy", { regions: ["eastus2"] });
    const east = await h.plan({ orgId: org, model: "openai/gpt-4o-mini", byokProviders: ["azure", "openai"] });
    expect(east.cascade.map((c) => c.endpointId)).toEqual(["ep_azure_gpt-4o-mini_eastus2"]);
  });

  it("plans a cloud's endpoints only in the regions the organisation's credentials serve", async () => {
    const org = newOrg();
    const eu = await h.plan({ orgId: org, model: "openai/gpt-4o-mini", byokProviders: ["azure"], credentialRegions: [{ providerSlug: "azure", regions: ["swedencentral"] }] });
    expect(eu.cascade.map((c) => c.endpointId)).toEqual(["ep_azure_gpt-4o-mini_swedencentral"]);
    expect(eu.refused.map((r) => [r.endpointId, r.constraint]).sort()).toEqual([
      ["ep_azure_gpt-4o-mini_eastus2", "byok_credential"],
      ["ep_openai_gpt-4o-mini", "byok_credential"],
    ]);
    // One endpoint left: nothing to draw between, so the plan is the same for every request.
    expect(eu.ordering).not.toBe("sampled");
    const both = await h.plan({ orgId: org, model: "openai/gpt-4o-mini", byokProviders: ["azure"], credentialRegions: [{ providerSlug: "azure", regions: ["eastus2", "swedencentral"] }] });
    expect(both.cascade.map((c) => c.endpointId).sort()).toEqual(["ep_azure_gpt-4o-mini_eastus2", "ep_azure_gpt-4o-mini_swedencentral"]);
  });

  it("with zdr on, keeps the endpoints that declare ZDR and refuses the others with privacy.zdr", async () => {
    const org = newOrg();
    expect((await as(org).put("/v1/privacy", { zdr: true })).status).toBe(200);
    const res = await h.plan({ orgId: org, model: LLAMA, byokProviders: HOSTS, provider: BY_PRICE });
    expect(providersOf(res)).toEqual(["fireworks", "groq", "ollama", "vllm"]);
    // Bedrock declares ZDR; it is refused for want of a credential only.
    expect(refusedBy(res)).toEqual({ together: "privacy.zdr", bedrock: "byok_credential" });

    // A model no ZDR endpoint serves is refused whole, naming the constraint.
    const gpt = await h.plan({ orgId: org, model: "openai/gpt-4o", byokProviders: HOSTS });
    // Azure's endpoints are refused too, for want of a credential (and none declares ZDR either).
    expect(gpt.refusal).toMatchObject({ code: "no_route", unsatisfiedFilters: ["privacy.zdr", "byok_credential"] });
  });

  it("with deny_training on, refuses the endpoints that may train on prompts; with regions, keeps the region's", async () => {
    const org = newOrg();
    await as(org).put("/v1/privacy", { deny_training: true });
    const deepseek = await h.plan({ orgId: org, model: "deepseek/deepseek-chat", byokProviders: HOSTS });
    expect(providersOf(deepseek)).toEqual(["fireworks", "together"]);
    expect(refusedBy(deepseek)).toEqual({ deepseek: "privacy.deny_training" });
    const gemini = await h.plan({ orgId: org, model: "google/gemini-2.5-flash", byokProviders: HOSTS });
    // Vertex AI's Gemini endpoints do not train on prompts; they are refused for want of a credential.
    expect(gemini.refusal).toMatchObject({ code: "no_route", unsatisfiedFilters: ["privacy.deny_training", "byok_credential"] });
    expect(providersOf(await h.plan({ orgId: org, model: LLAMA, byokProviders: HOSTS }))).toEqual(["fireworks", "groq", "ollama", "together", "vllm"]);

    await as(org).put("/v1/privacy", { regions: ["us"] });
    const us = await h.plan({ orgId: org, model: LLAMA, byokProviders: HOSTS });
    // Groq serves from several regions and self-hosted servers are wherever the operator runs them:
    // neither declares one, so a region rule refuses them (fails closed).
    expect(providersOf(us)).toEqual(["fireworks", "together"]);
    // Bedrock's us-east-1 endpoint is in the US; it is refused for want of a credential.
    expect(refusedBy(us)).toEqual({ groq: "privacy.regions", vllm: "privacy.regions", ollama: "privacy.regions", bedrock: "byok_credential" });
  });
});
