import { createPostgresDb } from "@router/db";
import { IDENTITY_HEADER, signIdentity, type Identity } from "@router/http-kit";
import type { routing } from "@router/proto";
import { newIdentityKeys, waitFor } from "@router/testkit";
import { startRouting } from "../src/app";
import { saveDefaults } from "../src/defaults/defaults-store";
import { fixtureCatalog } from "./catalog-fixture";
import { expectSoon, signedCall, silentLog, startHarness, startReplicaPair, type Harness } from "./routing-harness";

const KEYS = newIdentityKeys();
const ALL = ["alpha", "beta", "gamma", "local"];
const PATH = "/v1/routing/defaults";

const route = (res: routing.PlanResponse) => res.cascade.map((c) => `${c.modelRank}:${c.modelId}@${c.providerSlug}`);

let orgSeq = 0;
const newOrg = () => `org_defaults${(orgSeq += 1)}`;

/** The identity the gateway signs for a management key with no person behind it: an owner. */
function caller(orgId: string, overrides: Partial<Identity> = {}): Identity {
  return {
    orgId,
    credential: "management",
    keyHash: "a".repeat(64),
    keyName: "mgmt",
    workspaceId: null,
    role: "owner",
    userId: null,
    operator: false,
    ...overrides,
  };
}

describe("account routing defaults", () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ catalog: fixtureCatalog(), identityKeys: KEYS.publicKeys });
  });
  afterAll(async () => {
    await h.close();
  });

  async function call(method: string, identity: Identity | null, body?: unknown, keys = KEYS) {
    const headers: Record<string, string> = {};
    if (identity) headers[IDENTITY_HEADER] = await signIdentity(identity, keys.signingKey);
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(h.baseUrl + PATH, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  }
  const put = (orgId: string, body: unknown, overrides: Partial<Identity> = {}) => call("PUT", caller(orgId, overrides), body);
  const get = (orgId: string, overrides: Partial<Identity> = {}) => call("GET", caller(orgId, overrides));

  describe("GET and PUT /v1/routing/defaults", () => {
    it("answers every field, empty, for an organisation that never set them", async () => {
      const res = await get(newOrg());

      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        data: { default_model: null, fallback_models: [], default_sort: null, lock_sort: false, updated_at: null },
      });
    });

    it("stores the whole set and reads it back with its update time", async () => {
      const org = newOrg();
      const set = await put(org, {
        default_model: "acme/one",
        fallback_models: ["acme/two", "acme/three"],
        default_sort: "latency",
        lock_sort: true,
      });

      const expected = {
        default_model: "acme/one",
        fallback_models: ["acme/two", "acme/three"],
        default_sort: "latency",
        lock_sort: true,
        updated_at: h.clock.now().toISOString(),
      };
      expect(set.status).toBe(200);
      expect(set.body).toEqual({ data: expected });
      expect((await get(org)).body).toEqual({ data: expected });
    });

    it("replaces the whole set: a field the PUT omits is cleared", async () => {
      const org = newOrg();
      await put(org, { default_model: "acme/one", fallback_models: ["acme/two"], default_sort: "price", lock_sort: true });

      const res = await put(org, { fallback_models: ["acme/four"] });

      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ default_model: null, fallback_models: ["acme/four"], default_sort: null, lock_sort: false });
      expect((await get(org)).body.data).toEqual(res.body.data);
    });

    it("keeps each organisation's defaults to itself", async () => {
      const a = newOrg();
      const b = newOrg();
      await put(a, { default_model: "acme/one" });

      expect((await get(b)).body.data.default_model).toBeNull();
    });

    it("lets an admin set them", async () => {
      const res = await put(newOrg(), { default_model: "acme/two" }, { credential: "session", role: "admin", userId: "usr_1" });
      expect(res.status).toBe(200);
    });

    it.each(["member", "billing", "readonly"] as const)("refuses a %s the change with 403 permission_denied, but lets them read", async (role) => {
      const org = newOrg();
      await put(org, { default_model: "acme/one" });
      const person = { credential: "session" as const, role, userId: "usr_2" };

      const refused = await put(org, { default_model: "acme/two" }, person);
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe("permission_denied");

      const read = await get(org, person);
      expect(read.status).toBe(200);
      expect(read.body.data.default_model).toBe("acme/one");
    });

    it("refuses an inference key with 403, to read or to write", async () => {
      const org = newOrg();
      for (const res of [await get(org, { credential: "inference" }), await put(org, { default_model: "acme/one" }, { credential: "inference" })]) {
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe("permission_denied");
      }
      expect((await get(org)).body.data.default_model).toBeNull();
    });

    it("refuses a request without a valid signed identity with 401", async () => {
      expect((await call("GET", null)).status).toBe(401);
      const forged = await call("PUT", caller(newOrg()), { default_model: "acme/one" }, newIdentityKeys());
      expect(forged.status).toBe(401);
    });

    it.each([
      ["a default model that is not listed", { default_model: "acme/ghost" }, "default_model"],
      ["a default model written with a variant suffix", { default_model: "acme/one:nitro" }, "default_model"],
      ["an alias as default model", { default_model: "~acme/family" }, "default_model"],
      ["a blank default model", { default_model: "" }, "default_model"],
      ["a fallback that is not listed", { fallback_models: ["acme/one", "nobody/else"] }, "fallback_models.1"],
      ["a repeated fallback", { fallback_models: ["acme/one", "acme/two", "acme/one"] }, "fallback_models.2"],
      ["more than ten fallbacks", { fallback_models: Array.from({ length: 11 }, (_, i) => `acme/m${i}`) }, "fallback_models"],
      ["a fallback list that is not a list", { fallback_models: "acme/one" }, "fallback_models"],
      ["an unknown sort", { default_sort: "cheapest" }, "default_sort"],
      ["lock_sort without a sort to lock", { lock_sort: true }, "lock_sort"],
      ["lock_sort that is not a boolean", { default_sort: "price", lock_sort: "yes" }, "lock_sort"],
      ["an unknown field", { default_model: "acme/one", sort: "price" }, "sort"],
      ["a body that is not an object", ["acme/one"], "body"],
    ])("refuses %s with 400 naming the field, and changes nothing", async (_what, body, field) => {
      const org = newOrg();
      await put(org, { default_model: "acme/three" });

      const res = await put(org, body);

      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: "invalid_request", details: { field } });
      expect(res.body.error.message.startsWith(`${field}: `)).toBe(true);
      expect((await get(org)).body.data.default_model).toBe("acme/three");
    });

    it("checks the role before the body", async () => {
      const res = await put(newOrg(), { nonsense: true }, { credential: "session", role: "readonly", userId: "usr_3" });
      expect(res.status).toBe(403);
    });

    it("is not served when routing has no internal secret to verify identities with", async () => {
      const bare = await startRouting({ db: h.db, log: silentLog, clock: h.clock, httpPort: 0, grpcPort: 0 });
      try {
        const res = await fetch(`http://127.0.0.1:${bare.httpPort}${PATH}`, {
          headers: { [IDENTITY_HEADER]: await signIdentity(caller(newOrg()), KEYS.signingKey) },
        });
        expect(res.status).toBe(404);
      } finally {
        await bare.close();
      }
    });
  });

  describe("Plan with the account's defaults", () => {
    it("uses the default model when the request names none", async () => {
      const org = newOrg();
      await put(org, { default_model: "acme/two" });

      const res = await h.plan({ orgId: org, model: "", byokProviders: ALL });

      expect(res.refusal).toBeUndefined();
      expect(res.strategy).toBe("direct");
      expect(route(res)).toEqual(["1:acme/two@alpha"]);
    });

    it("keeps the request's own model over the default", async () => {
      const org = newOrg();
      await put(org, { default_model: "acme/two" });

      const res = await h.plan({ orgId: org, model: "acme/four", byokProviders: ALL });

      expect(route(res)).toEqual(["1:acme/four@gamma"]);
    });

    it("does not add the default model to a request that names its models", async () => {
      const org = newOrg();
      await put(org, { default_model: "acme/two" });

      const res = await h.plan({ orgId: org, models: ["acme/four"], byokProviders: ALL });

      expect(route(res)).toEqual(["1:acme/four@gamma"]);
    });

    it("refuses a request with no model when the account has no default, even with fallbacks", async () => {
      const org = newOrg();
      await put(org, { fallback_models: ["acme/one"] });

      const res = await h.plan({ orgId: org, byokProviders: ALL });

      expect(res.cascade).toEqual([]);
      expect(res.refusal).toMatchObject({ httpStatus: 400, code: "invalid_request" });
      expect(res.refusal?.message.startsWith("model: required")).toBe(true);
    });

    it("appends the account's fallback models after the request's models, then the request's own account fallbacks", async () => {
      const org = newOrg();
      await put(org, { fallback_models: ["acme/three"] });

      const res = await h.plan({ orgId: org, model: "acme/two", accountFallbackModels: ["acme/four"], byokProviders: ALL });

      expect(route(res)).toEqual(["1:acme/two@alpha", "2:acme/three@beta", "3:acme/four@gamma"]);
      expect(res.strategy).toBe("direct");
    });

    it("counts distinct models and stops at three, counting the rest as beyond the fallback depth", async () => {
      const org = newOrg();
      await put(org, { default_model: "acme/four", fallback_models: ["acme/two", "acme/three", "acme/one"] });

      const res = await h.plan({ orgId: org, model: "acme/two", models: ["acme/two:nitro", "acme/four"], byokProviders: ALL });

      expect(route(res)).toEqual(["1:acme/two@alpha", "2:acme/four@gamma", "3:acme/three@beta"]);
      // acme/one's three endpoints did not fit.
      expect(res.beyondFallbackDepth).toBe(3);
    });

    it("serves from a fallback model when the requested one has no usable endpoint", async () => {
      const org = newOrg();
      await put(org, { fallback_models: ["acme/four"] });

      const res = await h.plan({ orgId: org, model: "other/alone", byokProviders: ["alpha", "gamma"] });

      expect(res.refusal).toBeUndefined();
      expect(route(res)).toEqual(["2:acme/four@gamma"]);
    });

    it("uses a PUT made in this process on the very next Plan", async () => {
      const org = newOrg();
      await put(org, { default_model: "acme/two" });
      expect(route(await h.plan({ orgId: org, byokProviders: ALL }))).toEqual(["1:acme/two@alpha"]);

      await put(org, { default_model: "acme/four", fallback_models: ["acme/three"] });

      expect(route(await h.plan({ orgId: org, byokProviders: ALL }))).toEqual(["1:acme/four@gamma", "2:acme/three@beta"]);
    });

    it("picks up a change made by another replica once its copy is a few seconds old", async () => {
      const org = newOrg();
      await put(org, { default_model: "acme/two" });
      expect(route(await h.plan({ orgId: org, byokProviders: ALL }))).toEqual(["1:acme/two@alpha"]);

      await saveDefaults(h.db, org, { defaultModel: "acme/four", fallbackModels: [], defaultSort: null, lockSort: false, updatedAt: h.clock.now() });

      h.clock.advance(4_000);
      expect(route(await h.plan({ orgId: org, byokProviders: ALL }))).toEqual(["1:acme/two@alpha"]);
      h.clock.advance(1_500);
      await waitFor(async () => route(await h.plan({ orgId: org, byokProviders: ALL }))[0] === "1:acme/four@gamma", {
        what: "the other replica's default model to reach Plan",
      });
    });
  });
});

describe("Plan's account defaults without the database", () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ catalog: fixtureCatalog(), identityKeys: KEYS.publicKeys });
  });
  afterEach(async () => {
    await h.close();
  });

  /** Closes the pool the service reads through; the harness gets a fresh one for its teardown. */
  async function closeServiceDatabase(): Promise<void> {
    await h.db.close();
    h.db = createPostgresDb({ url: h.database.url, schema: "routing" });
  }

  it("plans from memory once an organisation's defaults are loaded", async () => {
    await saveDefaults(h.db, "org_mem", { defaultModel: "acme/two", fallbackModels: ["acme/four"], defaultSort: null, lockSort: false, updatedAt: h.clock.now() });
    await h.plan({ orgId: "org_mem", byokProviders: ALL });
    await closeServiceDatabase();

    for (let i = 0; i < 3; i += 1) {
      expect(route(await h.plan({ orgId: "org_mem", byokProviders: ALL }))).toEqual(["1:acme/two@alpha", "2:acme/four@gamma"]);
    }
  });

  it("still routes a named model when the defaults cannot be read, and refuses a model-less request with 503", async () => {
    await closeServiceDatabase();

    const named = await h.plan({ orgId: "org_unread", model: "acme/one", byokProviders: ["alpha"] });
    expect(route(named)).toEqual(["1:acme/one@alpha"]);

    const unnamed = await h.plan({ orgId: "org_unread", byokProviders: ALL });
    expect(unnamed.refusal).toMatchObject({ httpStatus: 503, code: "router.routing_unavailable" });
  });
});

describe("account routing defaults across routing replicas sharing Redis", () => {
  it("a default model set on one replica serves a model-less Plan on the other at once, not after its refresh period", async () => {
    const pair = await startReplicaPair(fixtureCatalog(), KEYS);
    try {
      const org = newOrg();
      const before = await pair.planOnOther({ orgId: org, byokProviders: ALL });
      expect(before.refusal).toMatchObject({ httpStatus: 400 }); // now cached there: no defaults
      const set = await signedCall(pair.h.baseUrl, KEYS, "PUT", PATH, caller(org), { default_model: "acme/two" });
      expect(set.status).toBe(200);
      await expectSoon(
        async () => route(await pair.planOnOther({ orgId: org, byokProviders: ALL }))[0] === "1:acme/two@alpha",
        "the other replica still had no default model",
      );
    } finally {
      await pair.close();
    }
  });
});
