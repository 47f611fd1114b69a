import { randomBytes } from "node:crypto";
import { newIdentityKeys } from "@router/testkit";
import type { Identity } from "@router/http-kit";
import { routing } from "@router/proto";
import { fixtureCatalog } from "./catalog-fixture";
import { expectSoon, managementIdentity, signedCall, startHarness, startReplicaPair, type Harness } from "./routing-harness";

const KEYS = newIdentityKeys();
const ALL = ["alpha", "beta", "gamma", "local"];

let orgSeq = 0;
const newOrg = () => `org_presets${(orgSeq += 1)}_${randomBytes(3).toString("hex")}`;

const caller = managementIdentity;
const call = (baseUrl: string, method: string, path: string, identity: Identity | null, body?: unknown) =>
  signedCall(baseUrl, KEYS, method, path, identity, body);

describe("presets", () => {
  let h: Harness;
  const as = (orgId: string, overrides: Partial<Identity> = {}) => ({
    get: (path: string) => call(h.baseUrl, "GET", path, caller(orgId, overrides)),
    post: (path: string, body: unknown) => call(h.baseUrl, "POST", path, caller(orgId, overrides), body),
    del: (path: string) => call(h.baseUrl, "DELETE", path, caller(orgId, overrides)),
  });
  const create = (orgId: string, slug: string, body: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    as(orgId).post("/v1/presets", { slug, name: `Preset ${slug}`, body, ...extra });

  beforeAll(async () => {
    h = await startHarness({ catalog: fixtureCatalog(), identityKeys: KEYS.publicKeys });
  });
  afterAll(async () => {
    await h.close();
  });

  describe("the routes", () => {
    it("creates a preset from a whole request body, keeping the settings and naming what it dropped", async () => {
      const org = newOrg();
      const res = await create(
        org,
        "fast-chat",
        {
          model: "acme/one",
          temperature: 0.2,
          max_tokens: 300,
          provider: { sort: "latency" },
          messages: [{ role: "system", content: "You are terse." }],
          stream: true,
          tools: [],
        },
        { description: "Low temperature" },
      );

      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({
        slug: "fast-chat",
        name: "Preset fast-chat",
        description: "Low temperature",
        version: 1,
        body: { model: "acme/one", temperature: 0.2, max_tokens: 300, provider: { sort: "latency" } },
        reference: "@preset/fast-chat",
        created_at: h.clock.now().toISOString(),
        updated_at: h.clock.now().toISOString(),
        dropped: ["messages", "stream", "tools"],
      });
    });

    it("lists each preset at its current version and reads one with its history, newest first", async () => {
      const org = newOrg();
      await create(org, "b-preset", { temperature: 0.1 });
      await create(org, "a-preset", { temperature: 0.5 });
      h.clock.advance(60_000);
      const saved = await as(org).post("/v1/presets/a-preset/versions", { body: { temperature: 0.7 }, note: "warmer", name: "Warmer" });
      expect(saved.status).toBe(201);
      expect(saved.body.data).toMatchObject({ slug: "a-preset", name: "Warmer", version: 2, body: { temperature: 0.7 }, dropped: [] });

      const list = await as(org).get("/v1/presets");
      expect(list.body.data.map((p: any) => [p.slug, p.version, p.body])).toEqual([
        ["a-preset", 2, { temperature: 0.7 }],
        ["b-preset", 1, { temperature: 0.1 }],
      ]);

      const read = await as(org).get("/v1/presets/a-preset");
      expect(read.status).toBe(200);
      expect(read.body.data).toMatchObject({ slug: "a-preset", version: 2, name: "Warmer" });
      expect(read.body.data.versions).toEqual([
        { version: 2, body: { temperature: 0.7 }, note: "warmer", created_at: h.clock.now().toISOString() },
        { version: 1, body: { temperature: 0.5 }, note: null, created_at: new Date(h.clock.now().getTime() - 60_000).toISOString() },
      ]);
    });

    it("reverts by adding a version that holds the old body; versions are never edited", async () => {
      const org = newOrg();
      await create(org, "rev", { temperature: 0.1 });
      await as(org).post("/v1/presets/rev/versions", { body: { temperature: 0.9 } });

      const reverted = await as(org).post("/v1/presets/rev/revert", { version: 1 });

      expect(reverted.status).toBe(201);
      expect(reverted.body.data).toMatchObject({ version: 3, body: { temperature: 0.1 } });
      const versions = (await as(org).get("/v1/presets/rev")).body.data.versions;
      expect(versions.map((v: any) => [v.version, v.body.temperature, v.note])).toEqual([
        [3, 0.1, "revert to version 1"],
        [2, 0.9, null],
        [1, 0.1, null],
      ]);
      const unknown = await as(org).post("/v1/presets/rev/revert", { version: 9 });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.details.field).toBe("version");
    });

    it("deletes a preset and its history; a second delete and a read are 404", async () => {
      const org = newOrg();
      await create(org, "gone", { temperature: 0.3 });

      const res = await as(org).del("/v1/presets/gone");

      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { slug: "gone", deleted: true } });
      expect((await as(org).get("/v1/presets/gone")).status).toBe(404);
      expect((await as(org).del("/v1/presets/gone")).status).toBe(404);
      const { rows } = await h.db.query("SELECT 1 FROM preset_versions WHERE org_id = $1", [org]);
      expect(rows).toHaveLength(0);
    });

    it("refuses a slug the organisation already has with 409, and keeps each organisation's presets to itself", async () => {
      const a = newOrg();
      const b = newOrg();
      await create(a, "mine", { temperature: 0.3 });

      const again = await create(a, "mine", { temperature: 0.4 });
      expect(again.status).toBe(409);
      expect(again.body.error.details.field).toBe("slug");

      expect((await as(b).get("/v1/presets/mine")).status).toBe(404);
      expect((await as(b).get("/v1/presets")).body.data).toEqual([]);
      expect((await create(b, "mine", { temperature: 0.5 })).status).toBe(201);
    });

    it.each([
      ["an upper-case slug", { slug: "Fast", name: "x", body: {} }, "slug"],
      ["a slug of 65 characters", { slug: "a".repeat(65), name: "x", body: {} }, "slug"],
      ["a slug with an underscore", { slug: "a_b", name: "x", body: {} }, "slug"],
      ["no name", { slug: "ok", body: {} }, "name"],
      ["no body", { slug: "ok", name: "x" }, "body"],
      ["a body that is not an object", { slug: "ok", name: "x", body: [1] }, "body"],
      ["a temperature out of range", { slug: "ok", name: "x", body: { temperature: 3 } }, "body.temperature"],
      ["a fractional top_k", { slug: "ok", name: "x", body: { top_k: 1.5 } }, "body.top_k"],
      ["an unknown sort", { slug: "ok", name: "x", body: { provider: { sort: "vibes" } } }, "body.provider.sort"],
      ["an unknown routing_stability", { slug: "ok", name: "x", body: { routing_stability: "glued" } }, "body.routing_stability"],
      ["a model the catalog does not list", { slug: "ok", name: "x", body: { model: "acme/ghost" } }, "body.model"],
      ["a preset naming a preset", { slug: "ok", name: "x", body: { models: ["acme/one", "@preset/other"] } }, "body.models.1"],
      ["both reasoning effort and budget", { slug: "ok", name: "x", body: { reasoning: { effort: "low", max_tokens: 2000 } } }, "body.reasoning"],
      ["an unknown top-level field", { slug: "ok", name: "x", body: {}, colour: "red" }, "colour"],
    ])("refuses %s with 400 naming the field, storing nothing", async (_what, body, field) => {
      const org = newOrg();
      const res = await as(org).post("/v1/presets", body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
      expect(res.body.error.details.field).toBe(field);
      expect((await as(org).get("/v1/presets")).body.data).toEqual([]);
    });

    it("validates a new version before storing it", async () => {
      const org = newOrg();
      await create(org, "v", { temperature: 0.3 });
      const res = await as(org).post("/v1/presets/v/versions", { body: { top_p: 2 } });
      expect(res.status).toBe(400);
      expect(res.body.error.details.field).toBe("body.top_p");
      expect((await as(org).get("/v1/presets/v")).body.data.versions).toHaveLength(1);
      expect((await as(org).post("/v1/presets/none/versions", { body: {} })).status).toBe(404);
    });

    it("lets any role read and a developer write, and refuses the others the writes with 403", async () => {
      const org = newOrg();
      const developer = { credential: "session" as const, role: "member" as const, userId: "usr_dev" };
      expect((await as(org, developer).post("/v1/presets", { slug: "dev", name: "Dev", body: {} })).status).toBe(201);
      for (const role of ["billing", "readonly"] as const) {
        const person = { credential: "session" as const, role, userId: `usr_${role}` };
        expect((await as(org, person).get("/v1/presets/dev")).status).toBe(200);
        const refused = await as(org, person).post("/v1/presets/dev/versions", { body: {} });
        expect(refused.status).toBe(403);
        expect(refused.body.error.code).toBe("permission_denied");
        expect((await as(org, person).del("/v1/presets/dev")).status).toBe(403);
      }
      expect((await as(org, { credential: "inference" }).get("/v1/presets")).status).toBe(403);
      expect((await call(h.baseUrl, "GET", "/v1/presets", null)).status).toBe(401);
    });
  });

  describe("in Plan", () => {
    const plan = (req: Partial<routing.PlanRequest>) => h.plan({ byokProviders: ALL, ...req });

    it("fills in what the request does not set, and lets the request's own fields win", async () => {
      const org = newOrg();
      await create(org, "cheap", {
        model: "acme/one",
        models: ["acme/two"],
        temperature: 0.2,
        max_tokens: 64,
        provider: { sort: "price" },
        routing_stability: "pinned",
        messages: [],
      });

      const res = await plan({ orgId: org, model: "@preset/cheap" });

      expect(res.refusal).toBeUndefined();
      expect(res.cascade.map((c) => `${c.modelRank}:${c.modelId}@${c.providerSlug}`)).toEqual([
        "1:acme/one@gamma",
        "1:acme/one@alpha",
        "1:acme/one@beta",
        "2:acme/two@alpha",
      ]);
      expect(res.ordering).toBe("deterministic");
      expect(res.sort).toBe("price");
      expect(res.strategy).toBe("fallback");
      expect(res.preset).toEqual({ slug: "cheap", version: 1, paramsJson: JSON.stringify({ temperature: 0.2, max_tokens: 64 }) });

      const own = await plan({
        orgId: org,
        model: "@preset/cheap",
        models: ["acme/three"],
        provider: routing.ProviderPreferences.fromPartial({ sort: "" }),
        sessionId: "conv-1",
        routingStability: "adaptive",
      });
      expect(own.cascade.map((c) => c.modelId)).toEqual(["acme/one", "acme/one", "acme/one", "acme/three"]);
      expect(own.sticky?.mode).toBe("adaptive");
    });

    it("uses the current version, or the version a reference pins", async () => {
      const org = newOrg();
      await create(org, "versions", { model: "acme/one" });
      await as(org).post("/v1/presets/versions/versions", { body: { model: "acme/two" } });

      expect((await plan({ orgId: org, model: "@preset/versions" })).cascade.map((c) => c.modelId)).toEqual(["acme/two"]);
      const pinned = await plan({ orgId: org, model: "@preset/versions@1" });
      expect(new Set(pinned.cascade.map((c) => c.modelId))).toEqual(new Set(["acme/one"]));
      expect(pinned.preset?.version).toBe(1);
      expect((await plan({ orgId: org, model: "@preset/versions@3" })).refusal).toMatchObject({ httpStatus: 404, code: "model_not_found" });
    });

    it("refuses a request naming a removed preset with 404, at once after the delete", async () => {
      const org = newOrg();
      await create(org, "short-lived", { model: "acme/one" });
      expect((await plan({ orgId: org, model: "@preset/short-lived" })).refusal).toBeUndefined();

      await as(org).del("/v1/presets/short-lived");

      const res = await plan({ orgId: org, model: "@preset/short-lived" });
      expect(res.refusal).toEqual({ httpStatus: 404, code: "model_not_found", message: "preset not found: @preset/short-lived", unsatisfiedFilters: [] });
      expect(res.unresolvedModels).toEqual(["@preset/short-lived"]);
      expect((await plan({ orgId: newOrg(), model: "@preset/short-lived" })).refusal?.code).toBe("model_not_found");
      expect((await plan({ orgId: org, model: "@preset/Bad Slug" })).refusal?.code).toBe("model_not_found");
    });

    it("sees a preset created after a request named it, at once", async () => {
      const org = newOrg();
      expect((await plan({ orgId: org, model: "@preset/later" })).refusal?.code).toBe("model_not_found");
      await create(org, "later", { model: "acme/two" });
      expect((await plan({ orgId: org, model: "@preset/later" })).cascade.map((c) => c.modelId)).toEqual(["acme/two"]);
    });
  });
});

describe("presets across routing replicas sharing Redis", () => {
  it("evicts a changed preset on the other replica at once, not after its refresh period", async () => {
    const pair = await startReplicaPair(fixtureCatalog(), KEYS);
    const { h } = pair;
    const planThere = (req: Partial<routing.PlanRequest>) => pair.planOnOther({ byokProviders: ALL, ...req });
    const stale = "the other replica still served the old preset";
    try {
      const org = newOrg();
      await call(h.baseUrl, "POST", "/v1/presets", caller(org), { slug: "shared", name: "Shared", body: { model: "acme/one" } });
      expect((await planThere({ orgId: org, model: "@preset/shared" })).cascade[0]?.modelId).toBe("acme/one");

      await call(h.baseUrl, "POST", "/v1/presets/shared/versions", caller(org), { body: { model: "acme/two" } });
      await expectSoon(async () => (await planThere({ orgId: org, model: "@preset/shared" })).cascade[0]?.modelId === "acme/two", stale);

      await call(h.baseUrl, "DELETE", "/v1/presets/shared", caller(org));
      await expectSoon(async () => (await planThere({ orgId: org, model: "@preset/shared" })).refusal?.code === "model_not_found", stale);
    } finally {
      await pair.close();
    }
  });
});
