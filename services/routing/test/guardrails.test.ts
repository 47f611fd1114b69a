import type { Identity } from "@router/http-kit";
import { newIdentityKeys } from "@router/testkit";
import { routing } from "@router/proto";
import { plan } from "../src/plan/plan";
import { fixtureCatalogWithDataPolicies } from "./catalog-fixture";
import { memoryCatalog } from "./memory-catalog";
import { expectSoon, managementIdentity, orgIds, servedAcmeOne, signedCall, signedClient, startHarness, startReplicaPair, type Harness } from "./routing-harness";

const KEYS = newIdentityKeys();
const ALL = ["alpha", "beta", "gamma", "local"];
const KEY = "k".repeat(64);
const BY_PRICE = routing.ProviderPreferences.fromPartial({ sort: "price" });

const newOrg = orgIds("guard");
const served = servedAcmeOne;

describe("guardrails", () => {
  let h: Harness;
  const as = (orgId: string, overrides: Partial<Identity> = {}) => signedClient(() => h.baseUrl, KEYS, managementIdentity(orgId, overrides));
  const planAs = (orgId: string, over: Partial<routing.PlanRequest> = {}) =>
    h.plan({ orgId, model: "acme/one", byokProviders: ALL, provider: BY_PRICE, ...over });

  beforeAll(async () => {
    h = await startHarness({ catalog: fixtureCatalogWithDataPolicies(), identityKeys: KEYS.publicKeys });
  });
  afterAll(async () => {
    await h.close();
  });

  describe("writes", () => {
    it("creates a guardrail: a gr_ id, regions lower-cased, the budget in nanodollars, content filters stored", async () => {
      const res = await as(newOrg()).post("/v1/guardrails", {
        name: "EU only",
        limit_usd: 12.5,
        reset_interval: "monthly",
        allowed_models: ["acme/one"],
        allowed_providers: ["alpha"],
        allowed_data_regions: ["EU"],
        enforce_zdr: { acme: true },
        content_filter_builtins: ["email"],
        content_filters: [{ pattern: "secret-\\d+", action: "redact" }],
        filter_allowlist: ["secret-0"],
      });
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(/^gr_[0-9a-f]{24}$/),
        name: "EU only",
        model_allowlist: ["acme/one"],
        provider_allowlist: ["alpha"],
        allowed_data_regions: ["eu"],
        budget_nanodollars: "12500000000",
        budget_reset: "monthly",
        include_byok_spend: false,
        zdr_flags: { acme: true },
        content_filter_builtins: ["email"],
        content_filters: [{ pattern: "secret-\\d+", action: "redact" }],
        filter_allowlist: ["secret-0"],
        created_at: "2025-11-01T12:00:00.000Z",
        assignments: [],
      });
    });

    it.each<[string, Record<string, unknown>]>([
      ["name", {}],
      ["name", { name: "" }],
      ["allowed_data_regions.0", { name: "g", allowed_data_regions: ["mars"] }],
      ["allowed_providers", { name: "g", allowed_providers: "alpha" }],
      ["limit_usd", { name: "g", limit_usd: -1 }],
      ["reset_interval", { name: "g", limit_usd: 1, reset_interval: "hourly" }],
      ["reset_interval", { name: "g", reset_interval: "daily" }],
      ["enforce_zdr.Not An Author", { name: "g", enforce_zdr: { "Not An Author": true } }],
      ["content_filter_builtins.0", { name: "g", content_filter_builtins: ["everything"] }],
      ["content_filters.0.pattern", { name: "g", content_filters: [{ pattern: "(", action: "block" }] }],
      ["content_filters.0.action", { name: "g", content_filters: [{ pattern: "x", action: "shout" }] }],
      ["allowed_modles", { name: "g", allowed_modles: ["acme/one"] }],
    ])("answers 400 naming %s for %j, storing nothing", async (field, body) => {
      const org = newOrg();
      const res = await as(org).post("/v1/guardrails", body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: "invalid_request", details: { field } });
      expect((await as(org).get("/v1/guardrails")).body.data).toEqual([]);
    });

    it("lets any role read and only owner or admin write", async () => {
      const org = newOrg();
      const created = (await as(org).post("/v1/guardrails", { name: "g" })).body.data;
      expect((await as(org, { role: "member" }).get("/v1/guardrails")).status).toBe(200);
      expect((await as(org, { role: "member" }).post("/v1/guardrails", { name: "g" })).status).toBe(403);
      expect((await as(org, { role: "member" }).del(`/v1/guardrails/${created.id}`)).status).toBe(403);
      expect((await as(org, { role: "admin" }).post(`/v1/guardrails/${created.id}/assignments`, { subject_type: "key", subject_id: KEY })).status).toBe(201);
    });

    it("keeps organisations apart: another's guardrail is a 404 and never listed", async () => {
      const mine = newOrg();
      const created = (await as(mine).post("/v1/guardrails", { name: "mine" })).body.data;
      const other = as(newOrg());
      expect((await other.get("/v1/guardrails")).body.data).toEqual([]);
      expect((await other.del(`/v1/guardrails/${created.id}`)).status).toBe(404);
      expect((await other.post(`/v1/guardrails/${created.id}/assignments`, { subject_type: "key", subject_id: KEY })).status).toBe(404);
      expect((await as(mine).get("/v1/guardrails")).body.data).toHaveLength(1);
    });

    it("assigns to a key or a member (twice changes nothing), lists the assignments, and 400s a bad subject", async () => {
      const org = newOrg();
      const { id } = (await as(org).post("/v1/guardrails", { name: "g" })).body.data;
      const assign = (body: unknown) => as(org).post(`/v1/guardrails/${id}/assignments`, body);
      expect((await assign({ subject_type: "key", subject_id: KEY })).body.data).toEqual({ guardrail_id: id, subject_type: "key", subject_id: KEY });
      await assign({ subject_type: "key", subject_id: KEY });
      await assign({ subject_type: "member", subject_id: "usr_1" });
      expect((await assign({ subject_type: "workspace", subject_id: "ws_1" })).body.error.details.field).toBe("subject_type");
      expect((await assign({ subject_type: "key" })).body.error.details.field).toBe("subject_id");
      expect((await as(org).get("/v1/guardrails")).body.data[0].assignments).toEqual([
        { subject_type: "key", subject_id: KEY },
        { subject_type: "member", subject_id: "usr_1" },
      ]);
      expect((await as(org).post("/v1/guardrails/gr_nope/assignments", { subject_type: "key", subject_id: KEY })).status).toBe(404);
    });
  });

  describe("enforcement in Plan", () => {
    it("restricts only the assigned key, intersects with the member's guardrail, and lifts at once when deleted", async () => {
      const org = newOrg();
      const providers = (await as(org).post("/v1/guardrails", { name: "providers", allowed_providers: ["alpha", "beta"] })).body.data;
      const regions = (await as(org).post("/v1/guardrails", { name: "regions", allowed_data_regions: ["us", "eu"], allowed_providers: ["beta", "gamma", "alpha"] })).body.data;
      await as(org).post(`/v1/guardrails/${providers.id}/assignments`, { subject_type: "key", subject_id: KEY });
      await as(org).post(`/v1/guardrails/${regions.id}/assignments`, { subject_type: "member", subject_id: "usr_7" });

      expect(served(await planAs(org))).toEqual(["gamma", "alpha", "beta"]);
      const keyOnly = await planAs(org, { keyHash: KEY });
      expect(served(keyOnly)).toEqual(["alpha", "beta"]);
      expect(keyOnly.refused).toContainEqual(expect.objectContaining({ providerSlug: "gamma", constraint: "guardrail.allowed_providers" }));

      // Both apply: the providers intersect to alpha and beta (gamma is refused by providers first).
      const both = await planAs(org, { keyHash: KEY, memberUserId: "usr_7" });
      expect(served(both)).toEqual(["alpha", "beta"]);
      const memberOnly = await planAs(org, { memberUserId: "usr_7" });
      // gamma declares no region, so the region allowlist refuses it (fails closed).
      expect(served(memberOnly)).toEqual(["alpha", "beta"]);
      expect(memberOnly.refused).toContainEqual(expect.objectContaining({ providerSlug: "gamma", constraint: "guardrail.allowed_data_regions" }));

      expect((await as(org).del(`/v1/guardrails/${providers.id}`)).body.data).toEqual({ id: providers.id, deleted: true });
      expect(served(await planAs(org, { keyHash: KEY }))).toEqual(["gamma", "alpha", "beta"]);
    });

    it("refuses with no_route naming the guardrail constraints when nothing is left (enforce_zdr and regions)", async () => {
      const org = newOrg();
      const zdr = (await as(org).post("/v1/guardrails", { name: "zdr", enforce_zdr: { acme: true } })).body.data;
      const eu = (await as(org).post("/v1/guardrails", { name: "eu", allowed_data_regions: ["eu"] })).body.data;
      await as(org).post(`/v1/guardrails/${zdr.id}/assignments`, { subject_type: "key", subject_id: KEY });
      expect(served(await planAs(org, { keyHash: KEY }))).toEqual(["alpha"]);
      await as(org).post(`/v1/guardrails/${eu.id}/assignments`, { subject_type: "key", subject_id: KEY });

      const res = await planAs(org, { keyHash: KEY, models: [] });
      expect(res.cascade).toEqual([]);
      expect(res.refusal).toMatchObject({ httpStatus: 404, code: "no_route" });
      expect([...(res.refusal?.unsatisfiedFilters ?? [])].sort()).toEqual(["guardrail.allowed_data_regions", "guardrail.enforce_zdr"]);
    });

    it("outranks the request's own preferences: a provider the request asks for first is still removed", async () => {
      const org = newOrg();
      const g = (await as(org).post("/v1/guardrails", { name: "no gamma", allowed_providers: ["alpha", "beta"] })).body.data;
      await as(org).post(`/v1/guardrails/${g.id}/assignments`, { subject_type: "key", subject_id: KEY });
      const res = await planAs(org, { keyHash: KEY, provider: routing.ProviderPreferences.fromPartial({ sort: "price", order: ["gamma"], only: ["gamma", "beta"] }) });
      expect(served(res)).toEqual(["beta"]);
      expect(res.refused).toContainEqual(expect.objectContaining({ providerSlug: "gamma", constraint: "guardrail.allowed_providers" }));
    });

    it("returns the budgets of the guardrails that apply (key and member), also when it refuses, for the gateway's Admit", async () => {
      const org = newOrg();
      const monthly = (await as(org).post("/v1/guardrails", { name: "monthly", limit_usd: 2.5, reset_interval: "monthly", include_byok_in_budgets: true })).body.data;
      const lifetime = (await as(org).post("/v1/guardrails", { name: "lifetime", limit_usd: 10, allowed_providers: ["beta"] })).body.data;
      const unlimited = (await as(org).post("/v1/guardrails", { name: "no budget", allowed_providers: ["alpha", "beta"] })).body.data;
      await as(org).post(`/v1/guardrails/${monthly.id}/assignments`, { subject_type: "key", subject_id: KEY });
      await as(org).post(`/v1/guardrails/${unlimited.id}/assignments`, { subject_type: "key", subject_id: KEY });
      await as(org).post(`/v1/guardrails/${lifetime.id}/assignments`, { subject_type: "member", subject_id: "usr_9" });

      expect((await planAs(org)).guardrailBudgets).toEqual([]);
      expect((await planAs(org, { keyHash: KEY })).guardrailBudgets).toEqual([
        { guardrailId: monthly.id, limitNanodollars: 2_500_000_000n, window: "monthly", includeByok: true },
      ]);
      const both = await planAs(org, { keyHash: KEY, memberUserId: "usr_9" });
      expect(both.guardrailBudgets).toEqual([
        { guardrailId: monthly.id, limitNanodollars: 2_500_000_000n, window: "monthly", includeByok: true },
        { guardrailId: lifetime.id, limitNanodollars: 10_000_000_000n, window: "lifetime", includeByok: false },
      ]);
      // A budget binds before routing: a refused plan still names it.
      const refused = await planAs(org, { keyHash: KEY, memberUserId: "usr_9", provider: routing.ProviderPreferences.fromPartial({ only: ["alpha"] }) });
      expect(refused.refusal).toMatchObject({ code: "no_route" });
      expect(refused.guardrailBudgets.map((b) => b.guardrailId)).toEqual([monthly.id, lifetime.id]);
    });
  });
});

describe("guardrails across routing replicas sharing Redis", () => {
  it("a guardrail assigned on one replica restricts Plan on the other at once, not after its refresh period", async () => {
    const pair = await startReplicaPair(fixtureCatalogWithDataPolicies(), KEYS);
    const planOnOther = async (orgId: string) =>
      served(await pair.planOnOther({ orgId, model: "acme/one", byokProviders: ALL, keyHash: KEY, provider: BY_PRICE }));
    try {
      const org = newOrg();
      const identity = managementIdentity(org);
      expect(await planOnOther(org)).toEqual(["gamma", "alpha", "beta"]); // now cached there: no guardrails
      const g = (await signedCall(pair.h.baseUrl, KEYS, "POST", "/v1/guardrails", identity, { name: "alpha", allowed_providers: ["alpha"] })).body.data;
      await signedCall(pair.h.baseUrl, KEYS, "POST", `/v1/guardrails/${g.id}/assignments`, identity, { subject_type: "key", subject_id: KEY });
      await expectSoon(async () => (await planOnOther(org)).join() === "alpha", "the other replica still routed without the guardrail");
    } finally {
      await pair.close();
    }
  });
});

describe("guardrails that cannot be read", () => {
  it("refuse with 503 rather than route unrestricted", () => {
    const catalog = memoryCatalog([{ model: "acme/x", provider: "alpha", prompt: 1, completion: 1 }]);
    const req = routing.PlanRequest.fromPartial({ orgId: "org_1", model: "acme/x", byokProviders: ["alpha"], keyHash: KEY });
    expect(plan(req, { catalog, seed: "s", guardrails: [] }).cascade).toHaveLength(1);
    expect(plan(req, { catalog, seed: "s", guardrails: null }).refusal).toMatchObject({ httpStatus: 503, code: "router.routing_unavailable" });
  });
});
