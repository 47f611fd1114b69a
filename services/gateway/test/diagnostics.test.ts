import { createHttpApp, finishApp, identityOf, listen, requireIdentity, type Identity, type RunningHttpServer } from "@router/http-kit";
import { createOrganisation } from "@router/console";
import { call, newOrganisation, publicKeysOf, silentLog, startHarness, testSecrets, type Harness } from "./harness";

const ORG_CACHE_FIELDS = ["auth", "guardrails", "budgets", "byok", "catalog", "plans"];
const ROUTING_CACHES = {
  guardrails: { hits: 7, misses: 2, stale: 1, refreshes: 1, size: 2 },
  catalog: { hits: 40, misses: 1, stale: 3, refreshes: 1, size: 120 },
};

describe("GET /v1/health (operator diagnostics)", () => {
  const secrets = testSecrets();
  let h: Harness;
  let routing: RunningHttpServer;
  const seen: Identity[] = [];

  beforeAll(async () => {
    // Stands in for routing's internal diagnostics route: it checks the signed identity as routing does.
    const app = createHttpApp({ log: silentLog });
    app.get("/internal/diagnostics", requireIdentity(publicKeysOf(secrets)), (req, res) => {
      seen.push(identityOf(req));
      res.json({ endpoint_health_age_ms: 1234, caches: ROUTING_CACHES });
    });
    finishApp(app, silentLog);
    routing = await listen(app, 0);
    h = await startHarness("gwdiag", { secrets, routingUrl: `http://127.0.0.1:${routing.port}` });
  });
  afterAll(async () => {
    await h.close();
    await routing.close();
  });

  it("answers an operator management key with the version, limits, cache counters and health age", async () => {
    const operator = await createOrganisation(h.consoleDb, { name: "Ops", operator: true }, h.secrets.ROUTER_KEY_PEPPER, h.clock);
    const res = await call(h.url, "GET", "/v1/health", { key: operator.managementKey });
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data).toMatchObject({ status: "ok", version: "9.9.9-test", rate_limiting: { store: "memory", shared: false } });
    expect(data.endpoint_health_age_ms).toBe(1234);
    expect(seen.at(-1)).toMatchObject({ orgId: operator.orgId, operator: true });
    expect(Object.keys(data.caches).sort()).toEqual([...ORG_CACHE_FIELDS].sort());
    // The key that authenticated this call went through the auth cache: one miss at least, one entry.
    expect(data.caches.auth.miss).toBeGreaterThanOrEqual(1);
    expect(data.caches.auth.size).toBeGreaterThanOrEqual(1);
    expect(data.caches.byok).toEqual({ hit: 0, miss: 0, stale: 0, size: 0 });
    expect(data.caches.plans).toEqual({ hit: 0, miss: 0, stale: 0, size: 0 });
    // Routing's caches, as routing's diagnostics count them.
    expect(data.caches.guardrails).toEqual({ hit: 7, miss: 2, stale: 1, size: 2 });
    expect(data.caches.catalog).toEqual({ hit: 40, miss: 1, stale: 3, size: 120 });
    // No chat request yet: the copy of which budgets exist holds nothing.
    expect(data.caches.budgets).toEqual({ hit: 0, miss: 0, stale: 0, size: 0 });

    const again = await call(h.url, "GET", "/v1/health", { key: operator.managementKey });
    expect(again.body.data.caches.auth.hit).toBeGreaterThan(data.caches.auth.hit);
  });

  it("is a 404 like an unknown path for a non-operator management key, an inference key and no credential", async () => {
    const org = await newOrganisation(h);
    const created = await call(h.url, "POST", "/v1/keys", { key: org.managementKey, body: { name: "app" } });
    expect(created.status).toBe(201);
    const unknown = await call(h.url, "GET", "/v1/healthz", { key: org.managementKey });
    for (const key of [org.managementKey, created.body.data.key as string, undefined]) {
      const res = await call(h.url, "GET", "/v1/health", { key });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
      expect(res.headers.get("www-authenticate")).toBeNull();
      expect(Object.keys(res.body.error)).toEqual(Object.keys(unknown.body.error));
    }
  });

  it("reports a null health age when routing does not answer", async () => {
    const other = await startHarness("gwdiagnorouting");
    try {
      const operator = await createOrganisation(other.consoleDb, { name: "Ops", operator: true }, other.secrets.ROUTER_KEY_PEPPER, other.clock);
      const res = await call(other.url, "GET", "/v1/health", { key: operator.managementKey });
      expect(res.status).toBe(200);
      expect(res.body.data.endpoint_health_age_ms).toBeNull();
    } finally {
      await other.close();
    }
  });
});
