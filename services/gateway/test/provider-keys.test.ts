import { ProviderCredentialSealer } from "@router/sealing";
import { grpcConsolePort } from "../src/console/console-port";
import { StoredCredentialSource } from "../src/provider-keys/credential-source";
import { call, newOrganisation, silentLog, startHarness, type Harness } from "./harness";

/**
 * Provider credentials end to end: the routes the gateway forwards to the console (which owns and
 * seals them), and the gateway's dispatch view, which asks the console over gRPC (in process here).
 */

let h: Harness;
let mgmt: string;
let orgId: string;
let source: StoredCredentialSource;

const OPENAI_KEY = "sk-proj-Zx8f3kQ2mW9tR7vY1uB5nL0pH4sJ6dG2aC";

beforeAll(async () => {
  h = await startHarness("gwpk");
  const org = await newOrganisation(h);
  mgmt = org.managementKey;
  orgId = org.orgId;
  source = dispatchView(h.secrets.ROUTER_MASTER_KEY, { cacheTtlMs: 0, flushIntervalMs: 60_000 });
});

afterAll(async () => {
  await source.close();
  await h.close();
});

function dispatchView(masterKey: string, opts: ConstructorParameters<typeof StoredCredentialSource>[1]): StoredCredentialSource {
  return new StoredCredentialSource(
    { directory: grpcConsolePort(h.console.inProcess), sealer: new ProviderCredentialSealer(masterKey), clock: h.clock, log: silentLog },
    opts,
  );
}

async function addCredential(body: Record<string, unknown>) {
  const res = await call(h.url, "POST", "/v1/provider-keys", { key: mgmt, body });
  expect(res.status).toBe(201);
  return res.body.data as Record<string, unknown> & { id: string };
}

describe("provider credentials", () => {
  it("adds a credential and answers with its fields and a key hint, never the key", async () => {
    const res = await call(h.url, "POST", "/v1/provider-keys", {
      key: mgmt,
      body: { provider: "openai", api_key: OPENAI_KEY, name: "prod", model_filter: { allow: ["openai/gpt-4o*"] } },
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^pk_[0-9A-Za-z]+$/),
      provider_slug: "openai",
      name: "prod",
      key_hint: "G2aC",
      tier: "prioritized",
      priority: 0,
      fallback_policy: "platform",
      model_filter: { allow: ["openai/gpt-4o*"] },
      disabled: false,
      created_at: "2026-11-21T10:00:00.000Z",
      last_used_at: null,
    });
    const list = await call(h.url, "GET", "/v1/provider-keys", { key: mgmt });
    expect(JSON.stringify(list.body)).not.toContain(OPENAI_KEY);
    expect(list.body.data.map((c: { id: string }) => c.id)).toContain(res.body.data.id);
  });

  it("stores the key sealed: no column holds its bytes, and it opens back to the same key", async () => {
    const created = await addCredential({ provider: "anthropic", api_key: "sk-ant-api03-secretvalue-0123456789" });
    const raw = await h.db.query<Record<string, unknown>>("SELECT * FROM console.provider_credentials WHERE id = $1", [created.id]);
    const row = raw.rows[0] as Record<string, unknown>;
    for (const value of Object.values(row)) {
      const bytes = Buffer.isBuffer(value) ? value : Buffer.from(JSON.stringify(value) ?? "");
      expect(bytes.includes(Buffer.from("secretvalue"))).toBe(false);
    }
    const opened = (await source.enabledFor(orgId)).find((c) => c.id === created.id);
    expect(opened?.apiKey).toBe("sk-ant-api03-secretvalue-0123456789");
  });

  it("does not open under another master key", async () => {
    const created = await addCredential({ provider: "mistral", api_key: "mistral-key-abcdefgh" });
    const wrong = dispatchView("a different master key", { cacheTtlMs: 0 });
    try {
      expect((await wrong.enabledFor(orgId)).map((c) => c.id)).not.toContain(created.id);
    } finally {
      await wrong.close();
    }
  });

  it("disables and enables a credential, and the dispatch view follows at once", async () => {
    const created = await addCredential({ provider: "groq", api_key: "gsk_0123456789abcdef" });
    const off = await call(h.url, "PATCH", `/v1/provider-keys/${created.id}`, { key: mgmt, body: { disabled: true } });
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ data: { id: created.id, disabled: true } });
    expect((await source.enabledFor(orgId)).map((c) => c.id)).not.toContain(created.id);
    const listed = await call(h.url, "GET", "/v1/provider-keys", { key: mgmt });
    expect(listed.body.data.find((c: { id: string }) => c.id === created.id).disabled).toBe(true);
    const on = await call(h.url, "PATCH", `/v1/provider-keys/${created.id}`, { key: mgmt, body: { disabled: false } });
    expect(on.body.data.disabled).toBe(false);
    expect((await source.enabledFor(orgId)).map((c) => c.id)).toContain(created.id);
  });

  it("deletes a credential", async () => {
    const created = await addCredential({ provider: "xai", api_key: "xai-0123456789abcdef" });
    const res = await call(h.url, "DELETE", `/v1/provider-keys/${created.id}`, { key: mgmt });
    expect(res.body).toEqual({ data: { deleted: true } });
    const listed = await call(h.url, "GET", "/v1/provider-keys", { key: mgmt });
    expect(listed.body.data.map((c: { id: string }) => c.id)).not.toContain(created.id);
    expect((await call(h.url, "DELETE", `/v1/provider-keys/${created.id}`, { key: mgmt })).status).toBe(404);
  });

  it("answers 404 for another organisation's credential and never lists it", async () => {
    const other = await newOrganisation(h, "Other");
    const theirs = await call(h.url, "POST", "/v1/provider-keys", {
      key: other.managementKey,
      body: { provider: "openai", api_key: "sk-theirs-0123456789" },
    });
    const id = theirs.body.data.id as string;
    expect((await call(h.url, "PATCH", `/v1/provider-keys/${id}`, { key: mgmt, body: { disabled: true } })).status).toBe(404);
    expect((await call(h.url, "DELETE", `/v1/provider-keys/${id}`, { key: mgmt })).status).toBe(404);
    const mine = await call(h.url, "GET", "/v1/provider-keys", { key: mgmt });
    expect(mine.body.data.map((c: { id: string }) => c.id)).not.toContain(id);
    expect((await source.enabledFor(orgId)).map((c) => c.id)).not.toContain(id);
  });

  it("refuses a malformed credential id with 400 naming id, as a malformed key hash is", async () => {
    for (const [method, body] of [["PATCH", { disabled: true }], ["DELETE", undefined]] as const) {
      const res = await call(h.url, method, "/v1/provider-keys/not-an-id", { key: mgmt, body });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: "invalid_request", details: { field: "id" } });
    }
  });

  it("refuses a provider with no adapter with 400 naming provider", async () => {
    const res = await call(h.url, "POST", "/v1/provider-keys", { key: mgmt, body: { provider: "acme-ai", api_key: "k-0123456789" } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe("provider");
  });

  it("refuses to change the key of a credential, naming api_key", async () => {
    const created = await addCredential({ provider: "deepseek", api_key: "ds-0123456789abcdef" });
    const res = await call(h.url, "PATCH", `/v1/provider-keys/${created.id}`, {
      key: mgmt,
      body: { disabled: false, api_key: "ds-new-key-0123456789" },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe("api_key");
  });
});

describe("the dispatch view of credentials", () => {
  it("orders prioritized before fallback, then by priority, then oldest first", async () => {
    const org = await newOrganisation(h, "Ordering");
    const add = async (body: Record<string, unknown>) => {
      h.clock.advance(1000);
      const res = await call(h.url, "POST", "/v1/provider-keys", { key: org.managementKey, body: { provider: "openai", ...body } });
      return res.body.data.id as string;
    };
    const fallback = await add({ api_key: "k-fallback-000000", tier: "fallback", priority: -5 });
    const second = await add({ api_key: "k-second-00000000", priority: 2 });
    const firstOld = await add({ api_key: "k-first-old-00000", priority: 1 });
    const firstNew = await add({ api_key: "k-first-new-00000", priority: 1 });
    const ordered = await source.enabledFor(org.orgId);
    expect(ordered.map((c) => c.id)).toEqual([firstOld, firstNew, second, fallback]);
    expect(ordered[3]).toMatchObject({ tier: "fallback", priority: -5, apiKey: "k-fallback-000000", providerSlug: "openai" });
  });

  it("applies model_filter: deny wins, allow limits, prefixes end in *", async () => {
    const created = await addCredential({
      provider: "openai",
      api_key: "sk-filter-0123456789",
      model_filter: { allow: ["openai/gpt-4o*", "openai/o3"], deny: ["openai/gpt-4o-mini"] },
    });
    const credential = (await source.enabledFor(orgId)).find((c) => c.id === created.id);
    if (!credential) throw new Error("credential not found");
    expect(source.allows(credential, "openai/gpt-4o")).toBe(true);
    expect(source.allows(credential, "openai/o3")).toBe(true);
    expect(source.allows(credential, "openai/gpt-4o-mini")).toBe(false);
    expect(source.allows(credential, "openai/gpt-5")).toBe(false);
  });

  it("writes last_used_at in a batch off the request path, never moving it backwards", async () => {
    const created = await addCredential({ provider: "together", api_key: "tg-0123456789abcdef" });
    source.markUsed(created.id, new Date("2026-11-21T11:00:00.000Z"));
    source.markUsed(created.id, new Date("2026-11-21T10:30:00.000Z"));
    const before = await call(h.url, "GET", "/v1/provider-keys", { key: mgmt });
    expect(before.body.data.find((c: { id: string }) => c.id === created.id).last_used_at).toBeNull();
    await source.flush();
    const after = await call(h.url, "GET", "/v1/provider-keys", { key: mgmt });
    expect(after.body.data.find((c: { id: string }) => c.id === created.id).last_used_at).toBe("2026-11-21T11:00:00.000Z");
    source.markUsed(created.id, new Date("2026-11-21T09:00:00.000Z"));
    await source.flush();
    const later = await call(h.url, "GET", "/v1/provider-keys", { key: mgmt });
    expect(later.body.data.find((c: { id: string }) => c.id === created.id).last_used_at).toBe("2026-11-21T11:00:00.000Z");
  });

  it("reuses decrypted credentials within the cache TTL and reads again after it", async () => {
    const cached = dispatchView(h.secrets.ROUTER_MASTER_KEY, { cacheTtlMs: 5_000 });
    try {
      const org = await newOrganisation(h, "Caching");
      expect(await cached.enabledFor(org.orgId)).toEqual([]);
      await call(h.url, "POST", "/v1/provider-keys", { key: org.managementKey, body: { provider: "ollama", api_key: "ollama-local" } });
      expect(await cached.enabledFor(org.orgId)).toEqual([]);
      h.clock.advance(5_000);
      expect((await cached.enabledFor(org.orgId)).map((c) => c.apiKey)).toEqual(["ollama-local"]);
    } finally {
      await cached.close();
    }
  });
});

describe("the instance that forwards a credential change", () => {
  it("drops its cached dispatch view once the console answered, even inside the cache TTL", async () => {
    const { createHttpApp, finishApp, identitySigningKey, listen } = await import("@router/http-kit");
    const { parseIdentitySigningKey } = await import("@router/config");
    const { AuthCache } = await import("../src/auth/auth-cache");
    const { createAuthenticator } = await import("../src/auth/authenticate");
    const { createManagementAuth } = await import("../src/auth/management-auth");
    const { SessionDirectory } = await import("../src/auth/session-directory");
    const { grpcConsolePort } = await import("../src/console/console-port");
    const { proxyRoutes } = await import("../src/proxy/proxy-routes");
    const { UpstreamProxy } = await import("../src/proxy/upstream-proxy");
    const credentials = dispatchView(h.secrets.ROUTER_MASTER_KEY, { cacheTtlMs: 60_000 });
    const consolePort = grpcConsolePort(h.console.inProcess);
    const keys = { cache: new AuthCache((hash) => consolePort.findKey(hash), h.clock), pepper: h.secrets.ROUTER_KEY_PEPPER, clock: h.clock };
    const sessions = new SessionDirectory({ load: (hash) => consolePort.findSession(hash), clock: h.clock, log: silentLog });
    const manage = createManagementAuth({ keys, sessions, csrfSecret: h.secrets.ROUTER_INTERNAL_SECRET });
    const proxy = new UpstreamProxy(silentLog);
    const pass: import("express").RequestHandler = (_req, _res, next) => next();
    const nowhere = "http://127.0.0.1:1";
    const app = createHttpApp({ log: silentLog });
    app.use(
      proxyRoutes({
        identity: consolePort,
        authenticate: createAuthenticator(keys),
        manage,
        proxy,
        identityKey: identitySigningKey(parseIdentitySigningKey(h.secrets.ROUTER_IDENTITY_SIGNING_KEY)),
        activityUrl: nowhere,
        alertsUrl: nowhere,
        routingUrl: nowhere,
        ledgerUrl: nowhere,
        reportsUrl: nowhere,
        broadcastUrl: nowhere,
        runawayUrl: nowhere,
        consoleUrl: `http://127.0.0.1:${h.console.httpPort}`,
        onCredentialWrite: (org) => credentials.invalidate(org),
        catalogLimit: pass,
        creditFeesLimit: pass,
        paymentEventsLimit: pass,
        exportLimit: pass,
        uptimeLimit: pass,
        signInLimits: { authExchange: pass, invitationLookup: pass, pkce: pass, walletChallenge: pass },
      }),
    );
    const server = await listen(finishApp(app, silentLog), 0);
    const url = `http://127.0.0.1:${server.port}`;
    try {
      const org = await newOrganisation(h, "Invalidation");
      expect(await credentials.enabledFor(org.orgId)).toEqual([]);
      const added = await call(url, "POST", "/v1/provider-keys", { key: org.managementKey, body: { provider: "vllm", api_key: "vllm-token-1234" } });
      expect(added.status).toBe(201);
      expect((await credentials.enabledFor(org.orgId)).map((c) => c.id)).toEqual([added.body.data.id]);
      await call(url, "PATCH", `/v1/provider-keys/${added.body.data.id}`, { key: org.managementKey, body: { disabled: true } });
      expect(await credentials.enabledFor(org.orgId)).toEqual([]);
    } finally {
      await server.close();
      await proxy.close();
      sessions.close();
      keys.cache.close();
      await credentials.close();
    }
  });
});
