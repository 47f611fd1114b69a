import { Client as PgClient } from "pg";
import { gatewayClient, startFakeOpenAi, startStack, waitFor, type FakeUpstream, type Stack } from "@router/testkit";

/**
 * Keys and provider credentials (BYOK), their whole lifecycle through the separate-process stack:
 * the gateway's routes, the ledger measuring usage over gRPC, and dispatch to a fake provider with
 * the credential a request was served on.
 *
 * gpt-4o-mini lists $0.15 per million prompt tokens and $0.60 per million completion tokens, so a
 * completion of 1 000 000 prompt tokens costs $0.15 at list price.
 */

type Client = ReturnType<typeof gatewayClient>;
const MODEL = "openai/gpt-4o-mini";
const chat = (text = "Hello") => ({ model: MODEL, messages: [{ role: "user", content: text }] });

describe("keys and provider credentials through the separate-process stack", () => {
  let stack: Stack;
  let openai: FakeUpstream;
  let mgmt: Client;
  let orgId: string;
  let other: { orgId: string; managementKey: string };

  beforeAll(async () => {
    openai = await startFakeOpenAi();
    stack = await startStack({
      providerBaseUrls: { openai: openai.url },
      // One management key makes every call of this suite, well over the product's 300 a minute; the
      // management limit itself is tested in the gateway's rate-limit tests.
      extraEnv: { GATEWAY_RATE_LIMITS: JSON.stringify({ management: { per_minute: 100_000, per_day: 1_000_000 } }) },
    });
    const org = await stack.createOrg("Keys Co");
    orgId = org.orgId;
    mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    other = await stack.createOrg("Rival Co");
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await openai?.close();
  });

  beforeEach(() => openai.reset());

  const createKey = async (client: Client, body: Record<string, unknown> = {}) => {
    const res = await client.post("/v1/keys", { name: "app", ...body });
    expect(res.status).toBe(201);
    return res.json.data as { key: string; hash: string; name: string; class: string };
  };

  const listedKey = async (hash: string, query = "") => {
    const res = await mgmt.get(`/v1/keys${query}`);
    expect(res.status).toBe(200);
    return (res.json.data as Array<Record<string, any>>).find((k) => k.hash === hash);
  };

  const addCredential = async (client: Client, body: Record<string, unknown>) => {
    const res = await client.post("/v1/provider-keys", body);
    expect(res.status).toBe(201);
    return res.json.data as Record<string, any> & { id: string };
  };

  const credentials = async (client: Client = mgmt) => {
    const res = await client.get("/v1/provider-keys");
    expect(res.status).toBe(200);
    return res.json.data as Array<Record<string, any>>;
  };

  describe("provider credentials", () => {
    // Every credential this block adds is deleted again, so the key tests below start from one.
    afterEach(async () => {
      for (const c of await credentials()) await mgmt.del(`/v1/provider-keys/${c.id}`);
    });

    it("adds a credential and lists it with a key hint, never the key", async () => {
      const res = await mgmt.post("/v1/provider-keys", {
        provider: "openai",
        api_key: "sk-proj-e2e-credential-Q7xz",
        name: "production",
        tier: "fallback",
        priority: 3,
        fallback_policy: "none_for_provider",
        model_filter: { allow: ["openai/gpt-4o*"] },
      });
      expect(res.status).toBe(201);
      expect(res.json.data).toEqual({
        id: expect.stringMatching(/^pk_/),
        provider_slug: "openai",
        name: "production",
        key_hint: "Q7xz",
        tier: "fallback",
        priority: 3,
        fallback_policy: "none_for_provider",
        model_filter: { allow: ["openai/gpt-4o*"] },
        disabled: false,
        created_at: expect.any(String),
        last_used_at: null,
      });
      const list = await mgmt.get("/v1/provider-keys");
      expect(list.json.data).toEqual([res.json.data]);
      expect(list.text).not.toContain("sk-proj-e2e-credential");
      expect(stack.logs()).not.toContain("sk-proj-e2e-credential");
    });

    it("dispatches with the credential's key and records when it was last used", async () => {
      const created = await addCredential(mgmt, { provider: "openai", api_key: "sk-dispatch-0001" });
      const inference = gatewayClient(stack.gatewayUrl, (await createKey(mgmt)).key);
      const res = await inference.post("/v1/chat/completions", chat());
      expect(res.status).toBe(200);
      expect(openai.requests.map((r) => r.headers.authorization)).toEqual(["Bearer sk-dispatch-0001"]);
      // Written in a batch off the request path (every 5 s).
      const used = await waitFor(
        async () => (await credentials()).find((c) => c.id === created.id && c.last_used_at !== null),
        { timeoutMs: 15_000, what: "last_used_at" },
      );
      expect(Date.parse(used.last_used_at as string)).toBeGreaterThanOrEqual(Date.parse(created.created_at as string));
    });

    it("tries credentials prioritized before fallback, then by priority, moving on when one is rate limited", async () => {
      await addCredential(mgmt, { provider: "openai", api_key: "sk-fallback-0003", tier: "fallback", priority: -10 });
      await addCredential(mgmt, { provider: "openai", api_key: "sk-second-0002", priority: 5 });
      await addCredential(mgmt, { provider: "openai", api_key: "sk-first-0001", priority: 1 });
      openai.script(
        { failure: { kind: "status", status: 429, code: "rate_limit_exceeded" } },
        { failure: { kind: "status", status: 429, code: "rate_limit_exceeded" } },
        { text: "served by the fallback key" },
      );
      const inference = gatewayClient(stack.gatewayUrl, (await createKey(mgmt)).key);
      const res = await inference.post("/v1/chat/completions", chat());
      expect(res.status).toBe(200);
      expect(res.json.choices[0].message.content).toBe("served by the fallback key");
      expect(openai.requests.map((r) => r.headers.authorization)).toEqual([
        "Bearer sk-first-0001",
        "Bearer sk-second-0002",
        "Bearer sk-fallback-0003",
      ]);
    });

    it("does not try the provider's other credentials after a failure when fallback_policy is none_for_provider", async () => {
      await addCredential(mgmt, { provider: "openai", api_key: "sk-only-this-0001", priority: 0, fallback_policy: "none_for_provider" });
      await addCredential(mgmt, { provider: "openai", api_key: "sk-never-0002", priority: 1 });
      openai.script({ failure: { kind: "status", status: 429, code: "rate_limit_exceeded", retryAfter: "7" } }, { text: "must not be served" });
      const inference = gatewayClient(stack.gatewayUrl, (await createKey(mgmt)).key);
      const res = await inference.post("/v1/chat/completions", chat(), { "X-Router-Metadata": "enabled" });
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toBe("7");
      expect(res.json.error.code).toBe("upstream_error");
      expect(openai.requests.map((r) => r.headers.authorization)).toEqual(["Bearer sk-only-this-0001"]);
      expect(res.json.router_metadata.skipped).toEqual(
        expect.arrayContaining([expect.objectContaining({ provider: "openai", reason: "fallback_policy" })]),
      );
    });

    it("skips a credential whose model_filter denies the model, and answers no_route when none allows it", async () => {
      await addCredential(mgmt, { provider: "openai", api_key: "sk-denies-0001", priority: 0, model_filter: { deny: ["openai/gpt-4o-mini"] } });
      const allowing = await addCredential(mgmt, { provider: "openai", api_key: "sk-allows-0002", priority: 9, model_filter: { allow: ["openai/*"] } });
      const inference = gatewayClient(stack.gatewayUrl, (await createKey(mgmt)).key);
      expect((await inference.post("/v1/chat/completions", chat())).status).toBe(200);
      expect(openai.requests.map((r) => r.headers.authorization)).toEqual(["Bearer sk-allows-0002"]);

      expect((await mgmt.del(`/v1/provider-keys/${allowing.id}`)).status).toBe(200);
      const refused = await inference.post("/v1/chat/completions", chat());
      expect(refused.status).toBe(404);
      expect(refused.json.error).toMatchObject({ code: "no_route", details: { unsatisfied_filters: ["byok_credential"] } });
      expect(openai.requests).toHaveLength(1);
    });

    it("stops dispatching on a disabled credential at once, and again on enabling it", async () => {
      const created = await addCredential(mgmt, { provider: "openai", api_key: "sk-toggle-0001" });
      const inference = gatewayClient(stack.gatewayUrl, (await createKey(mgmt)).key);
      const off = await mgmt.patch(`/v1/provider-keys/${created.id}`, { disabled: true });
      expect(off.status).toBe(200);
      expect(off.json.data).toEqual({ id: created.id, disabled: true });
      expect((await credentials()).find((c) => c.id === created.id)?.disabled).toBe(true);
      const refused = await inference.post("/v1/chat/completions", chat());
      expect(refused.status).toBe(404);
      expect(refused.json.error.code).toBe("no_route");
      expect(openai.requests).toHaveLength(0);

      expect((await mgmt.patch(`/v1/provider-keys/${created.id}`, { disabled: false })).json.data).toEqual({ id: created.id, disabled: false });
      expect((await inference.post("/v1/chat/completions", chat())).status).toBe(200);
      expect(openai.requests.map((r) => r.headers.authorization)).toEqual(["Bearer sk-toggle-0001"]);
    });

    // The 5 s bound itself is the credential cache's, proven with the injected clock in the
    // gateway's provider-keys tests; here, that a change on one replica reaches another at all.
    it("stops dispatching a disabled credential on another gateway replica once its cached copy expires", async () => {
      const created = await addCredential(mgmt, { provider: "openai", api_key: "sk-replica-0001" });
      const replicaUrl = await stack.startGatewayReplica();
      const onReplica = gatewayClient(replicaUrl, (await createKey(mgmt)).key);
      expect((await onReplica.post("/v1/chat/completions", chat())).status).toBe(200);
      expect((await mgmt.patch(`/v1/provider-keys/${created.id}`, { disabled: true })).status).toBe(200);
      await waitFor(async () => (await onReplica.post("/v1/chat/completions", chat())).status === 404, {
        timeoutMs: 20_000,
        intervalMs: 100,
        what: "the replica to stop using the disabled credential",
      });
      const dispatched = openai.requests.filter((r) => r.headers.authorization === "Bearer sk-replica-0001").length;
      expect((await onReplica.post("/v1/chat/completions", chat())).status).toBe(404);
      expect(openai.requests.filter((r) => r.headers.authorization === "Bearer sk-replica-0001")).toHaveLength(dispatched);
    }, 40_000);

    it("deletes a credential: gone from the list and from dispatch, and a second delete is 404", async () => {
      const created = await addCredential(mgmt, { provider: "openai", api_key: "sk-delete-0001" });
      const res = await mgmt.del(`/v1/provider-keys/${created.id}`);
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ data: { deleted: true } });
      expect((await credentials()).map((c) => c.id)).not.toContain(created.id);
      const inference = gatewayClient(stack.gatewayUrl, (await createKey(mgmt)).key);
      expect((await inference.post("/v1/chat/completions", chat())).status).toBe(404);
      expect(openai.requests).toHaveLength(0);
      const again = await mgmt.del(`/v1/provider-keys/${created.id}`);
      expect(again.status).toBe(404);
      expect(again.json.error.code).toBe("not_found");
    });

    it("never shows, changes or dispatches on another organisation's credential", async () => {
      const rival = gatewayClient(stack.gatewayUrl, other.managementKey);
      const theirs = await addCredential(rival, { provider: "openai", api_key: "sk-rival-0001" });
      try {
        expect(await credentials()).toEqual([]);
        expect((await mgmt.patch(`/v1/provider-keys/${theirs.id}`, { disabled: true })).status).toBe(404);
        expect((await mgmt.del(`/v1/provider-keys/${theirs.id}`)).status).toBe(404);
        const inference = gatewayClient(stack.gatewayUrl, (await createKey(mgmt)).key);
        expect((await inference.post("/v1/chat/completions", chat())).status).toBe(404);
        expect(openai.requests).toHaveLength(0);
        expect((await credentials(rival)).find((c) => c.id === theirs.id)?.disabled).toBe(false);
      } finally {
        await rival.del(`/v1/provider-keys/${theirs.id}`);
      }
    });

    it("is managed only with a management key", async () => {
      const inference = gatewayClient(stack.gatewayUrl, (await createKey(mgmt)).key);
      const res = await inference.post("/v1/provider-keys", { provider: "openai", api_key: "sk-inference-0001" });
      expect(res.status).toBe(403);
      expect(await credentials()).toEqual([]);
    });

    it.each<[string, Record<string, unknown>]>([
      ["provider", { api_key: "sk-x-00000001" }],
      ["provider", { provider: "acme-ai", api_key: "sk-x-00000001" }],
      ["api_key", { provider: "openai" }],
      ["api_key", { provider: "openai", api_key: "" }],
      ["api_key", { provider: "openai", api_key: " sk-spaced-0001 " }],
      ["name", { provider: "openai", api_key: "sk-x-00000001", name: 42 }],
      ["tier", { provider: "openai", api_key: "sk-x-00000001", tier: "primary" }],
      ["priority", { provider: "openai", api_key: "sk-x-00000001", priority: 1.5 }],
      ["priority", { provider: "openai", api_key: "sk-x-00000001", priority: "1" }],
      ["fallback_policy", { provider: "openai", api_key: "sk-x-00000001", fallback_policy: "always" }],
      ["model_filter", { provider: "openai", api_key: "sk-x-00000001", model_filter: ["openai/gpt-4o"] }],
      ["model_filter.allow.0", { provider: "openai", api_key: "sk-x-00000001", model_filter: { allow: ["has space"] } }],
      ["model_filter.block", { provider: "openai", api_key: "sk-x-00000001", model_filter: { block: ["openai/gpt-4o"] } }],
    ])("refuses a bad %s on add with 400 naming it, and stores nothing", async (field, body) => {
      const res = await mgmt.post("/v1/provider-keys", body);
      expect(res.status).toBe(400);
      expect(res.json.error).toMatchObject({ code: "invalid_request", details: { field } });
      expect(await credentials()).toEqual([]);
    });

    it.each<[string, Record<string, unknown>]>([
      ["disabled", {}],
      ["disabled", { disabled: "yes" }],
      ["api_key", { disabled: false, api_key: "sk-new-00000001" }],
      ["tier", { disabled: false, tier: "fallback" }],
    ])("refuses a bad change (%s) with 400 naming it, and changes nothing", async (field, body) => {
      const created = await addCredential(mgmt, { provider: "openai", api_key: "sk-patch-0001" });
      const res = await mgmt.patch(`/v1/provider-keys/${created.id}`, body);
      expect(res.status).toBe(400);
      expect(res.json.error.details.field).toBe(field);
      expect((await credentials()).find((c) => c.id === created.id)).toEqual(created);
    });
  });

  describe("keys", () => {
    beforeAll(async () => {
      await addCredential(mgmt, { provider: "openai", api_key: "sk-keys-0001" });
    });

    /** Spends $0.15 at list price on `key` (BYOK: billed 0, counted only where the key says so). */
    const spend = async (client: Client) => {
      openai.script({ text: "spent", usage: { prompt: 1_000_000, completion: 0 } });
      const res = await client.post("/v1/chat/completions", chat("Spend"));
      expect(res.status).toBe(200);
      return res;
    };

    it("mints an inference key by default and a management key with class management", async () => {
      const created = await createKey(mgmt, { name: "checkout bot" });
      expect(created).toMatchObject({ name: "checkout bot", class: "inference", key: expect.stringMatching(/^rt-v1-/) });
      const inference = gatewayClient(stack.gatewayUrl, created.key);
      expect((await inference.get("/v1/keys")).status).toBe(403);

      const admin = await createKey(mgmt, { name: "ops", class: "management" });
      expect(admin).toMatchObject({ class: "management", key: expect.stringMatching(/^rt-mgmt-/) });
      const adminClient = gatewayClient(stack.gatewayUrl, admin.key);
      expect((await adminClient.get("/v1/keys")).status).toBe(200);
      const refused = await adminClient.post("/v1/chat/completions", chat());
      expect(refused.status).toBe(403);
      expect(openai.requests).toHaveLength(0);
    });

    it("lists every field of the key row, with usage as the ledger measures it", async () => {
      const created = await createKey(mgmt, { name: "metered", limit: 1, limit_reset: "daily", limit_mode: "hard", include_byok_in_limit: true });
      const fresh = await listedKey(created.hash);
      const tomorrow = new Date();
      tomorrow.setUTCHours(24, 0, 0, 0);
      expect(fresh).toEqual({
        hash: created.hash,
        prefix: created.key.slice(0, 10),
        name: "metered",
        label: `${created.key.slice(0, 10)}...${created.key.slice(-4)}`,
        class: "inference",
        disabled: false,
        limit: 1,
        limit_nanodollars: "1000000000",
        limit_reset: "daily",
        limit_mode: "hard",
        include_byok_in_limit: true,
        workspace_id: expect.stringMatching(/^ws_/),
        usage: 0,
        limit_remaining: 1,
        limit_resets_at: tomorrow.toISOString(),
        paused: false,
        paused_reason: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        expires_at: null,
        external_user: null,
      });
      expect(JSON.stringify(fresh)).not.toContain(created.key);

      await spend(gatewayClient(stack.gatewayUrl, created.key));
      const spent = await waitFor(async () => {
        const row = await listedKey(created.hash);
        return row?.usage === 0.15 ? row : undefined;
      }, { timeoutMs: 15_000, what: "usage of 0.15 after settlement" });
      expect(spent).toMatchObject({ usage: 0.15, limit_remaining: 0.85 });
      const info = await gatewayClient(stack.gatewayUrl, created.key).get("/v1/key");
      expect(info.json.data).toMatchObject({ usage: 0.15, limit_remaining: 0.85, limit: 1, limit_reset: "daily" });
    });

    it("counts nothing for BYOK spend on a key that leaves BYOK out of its ceiling", async () => {
      const created = await createKey(mgmt, { limit: 1, limit_reset: "daily" });
      await spend(gatewayClient(stack.gatewayUrl, created.key));
      // Let settlement land before reading: the key next door, which counts BYOK, shows it has.
      const witness = await createKey(mgmt, { limit: 1, include_byok_in_limit: true });
      await spend(gatewayClient(stack.gatewayUrl, witness.key));
      await waitFor(async () => (await listedKey(witness.hash))?.usage === 0.15, { timeoutMs: 15_000, what: "the witness's usage" });
      expect(await listedKey(created.hash)).toMatchObject({ usage: 0, limit_remaining: 1 });
    });

    it("refuses a hard-limit key past its ceiling with 403 budget_exceeded before any provider is asked", async () => {
      const created = await createKey(mgmt, { limit: 0.1, limit_mode: "hard", include_byok_in_limit: true });
      const client = gatewayClient(stack.gatewayUrl, created.key);
      await spend(client);
      const refused = await waitFor(async () => {
        openai.script({ text: "should not be served" });
        const res = await client.post("/v1/chat/completions", chat());
        return res.status === 403 ? res : undefined;
      }, { timeoutMs: 15_000, what: "the ceiling to refuse" });
      expect(refused.json.error.code).toBe("budget_exceeded");
      const calls = openai.requests.length;
      expect((await client.post("/v1/chat/completions", chat())).status).toBe(403);
      expect(openai.requests).toHaveLength(calls);
    });

    it("warns a soft-limit key past its ceiling and still serves it", async () => {
      const created = await createKey(mgmt, { limit: 0.1, limit_mode: "soft", include_byok_in_limit: true });
      const client = gatewayClient(stack.gatewayUrl, created.key);
      await spend(client);
      const warned = await waitFor(async () => {
        const res = await client.post("/v1/chat/completions", chat());
        expect(res.status).toBe(200);
        return res.headers.get("x-router-limit-warning") ? res : undefined;
      }, { timeoutMs: 15_000, what: "the limit warning" });
      expect(warned.json.choices[0].message.content).toBeDefined();
      expect(await listedKey(created.hash)).toMatchObject({ limit_mode: "soft", limit_remaining: expect.any(Number) });
      expect((await listedKey(created.hash))?.limit_remaining).toBeLessThan(0);
    });

    it("changes the ceiling, window, mode and BYOK flag with PATCH, and reports them", async () => {
      const created = await createKey(mgmt, { limit: 5 });
      const res = await mgmt.patch(`/v1/keys/${created.hash}`, { limit: 20, limit_reset: "weekly", limit_mode: "soft", include_byok_in_limit: true });
      expect(res.status).toBe(200);
      expect(res.json.data).toMatchObject({ hash: created.hash, limit: 20, limit_reset: "weekly", limit_mode: "soft", include_byok_in_limit: true });
      expect(await listedKey(created.hash)).toMatchObject({ limit: 20, limit_nanodollars: "20000000000", limit_reset: "weekly", limit_mode: "soft" });
      const cleared = await mgmt.patch(`/v1/keys/${created.hash}`, { limit: null });
      expect(cleared.json.data.limit).toBeNull();
      expect(await listedKey(created.hash)).toMatchObject({ limit: null, usage: null, limit_remaining: null, limit_resets_at: null });
    });

    it("moves a key to another workspace of the organisation, never to another organisation's", async () => {
      // No workspace route exists yet (a later issue): the second workspace is put in place directly.
      const pg = new PgClient({ connectionString: stack.env.DATABASE_URL });
      await pg.connect();
      try {
        await pg.query("INSERT INTO console.workspaces (id, org_id, name, slug, created_at) VALUES ('ws_clientb', $1, 'Client B', 'client-b', now())", [orgId]);
        const rivalWorkspace = (await pg.query<{ id: string }>("SELECT id FROM console.workspaces WHERE org_id = $1", [other.orgId])).rows[0]!.id;
        const created = await createKey(mgmt);
        const moved = await mgmt.patch(`/v1/keys/${created.hash}`, { workspace_id: "ws_clientb" });
        expect(moved.status).toBe(200);
        expect(moved.json.data.workspace_id).toBe("ws_clientb");
        expect((await listedKey(created.hash))?.workspace_id).toBe("ws_clientb");
        const refused = await mgmt.patch(`/v1/keys/${created.hash}`, { workspace_id: rivalWorkspace });
        expect(refused.status).toBe(404);
        expect((await listedKey(created.hash))?.workspace_id).toBe("ws_clientb");
        const inWorkspace = await createKey(mgmt, { workspace_id: "ws_clientb" });
        expect((await listedKey(inWorkspace.hash))?.workspace_id).toBe("ws_clientb");
      } finally {
        await pg.end();
      }
    });

    it("pauses a key so chat answers 403 key_paused before any provider is asked, and resumes it", async () => {
      const created = await createKey(mgmt);
      const client = gatewayClient(stack.gatewayUrl, created.key);
      const paused = await mgmt.patch(`/v1/keys/${created.hash}`, { paused: true });
      expect(paused.json.data).toMatchObject({ paused: true, paused_reason: "manual" });
      expect(await listedKey(created.hash)).toMatchObject({ paused: true, paused_reason: "manual" });
      const refused = await client.post("/v1/chat/completions", chat());
      expect(refused.status).toBe(403);
      expect(refused.json.error.code).toBe("key_paused");
      const refusedStream = await client.stream(chat());
      expect(refusedStream.status).toBe(403);
      expect(openai.requests).toHaveLength(0);

      const resumed = await mgmt.patch(`/v1/keys/${created.hash}`, { paused: false });
      expect(resumed.json.data).toMatchObject({ paused: false, paused_reason: null });
      expect((await client.post("/v1/chat/completions", chat())).status).toBe(200);
    });

    it("revokes a key: refused at once, listed only with include_disabled, and closed to changes", async () => {
      const created = await createKey(mgmt, { limit: 4 });
      const client = gatewayClient(stack.gatewayUrl, created.key);
      expect((await client.post("/v1/chat/completions", chat())).status).toBe(200);
      const res = await mgmt.del(`/v1/keys/${created.hash}`);
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ data: { deleted: true } });
      const refused = await client.post("/v1/chat/completions", chat());
      expect(refused.status).toBe(401);
      expect(refused.json.error.code).toBe("unauthorized");
      expect(openai.requests).toHaveLength(1);
      expect(await listedKey(created.hash)).toBeUndefined();
      expect(await listedKey(created.hash, "?include_disabled=true")).toMatchObject({ disabled: true });
      expect((await mgmt.patch(`/v1/keys/${created.hash}`, { limit: 1 })).status).toBe(409);
    });

    // The 10 s bound itself is the auth cache's, proven with the injected clock in the gateway's
    // auth-cache tests; here, that a revocation on one replica reaches another at all.
    it("revokes a key on every other gateway replica once its cached copy expires", async () => {
      const replicaUrl = await stack.startGatewayReplica();
      const created = await createKey(mgmt);
      const onReplica = gatewayClient(replicaUrl, created.key);
      expect((await onReplica.get("/v1/key")).status).toBe(200);
      expect((await mgmt.del(`/v1/keys/${created.hash}`)).status).toBe(200);
      await waitFor(async () => (await onReplica.get("/v1/key")).status === 401, {
        timeoutMs: 25_000,
        intervalMs: 100,
        what: "the replica to refuse the revoked key",
      });
      const refused = await onReplica.post("/v1/chat/completions", chat());
      expect(refused.status).toBe(401);
      expect(openai.requests).toHaveLength(0);
    }, 40_000);

    it("never lists, changes or revokes another organisation's key", async () => {
      const rival = gatewayClient(stack.gatewayUrl, other.managementKey);
      const theirs = await createKey(rival, { name: "theirs" });
      expect(await listedKey(theirs.hash, "?include_disabled=true")).toBeUndefined();
      expect((await mgmt.patch(`/v1/keys/${theirs.hash}`, { paused: true })).status).toBe(404);
      expect((await mgmt.del(`/v1/keys/${theirs.hash}`)).status).toBe(404);
      const still = (await rival.get("/v1/keys")).json.data as Array<Record<string, any>>;
      expect(still.find((k) => k.hash === theirs.hash)).toMatchObject({ paused: false, disabled: false });
    });

    it.each<[string, Record<string, unknown>]>([
      ["limit", { limit: -1 }],
      ["limit", { limit: "10" }],
      ["limit_reset", { limit_reset: "hourly" }],
      ["limit_mode", { limit_mode: "strict" }],
      ["include_byok_in_limit", { include_byok_in_limit: "yes" }],
      ["workspace_id", { workspace_id: "not-a-workspace" }],
      ["class", { class: "admin" }],
      ["name", { name: "" }],
    ])("refuses a bad %s on create with 400 naming it", async (field, body) => {
      const before = ((await mgmt.get("/v1/keys?include_disabled=true")).json.data as unknown[]).length;
      const res = await mgmt.post("/v1/keys", { name: "bad", ...body });
      expect(res.status).toBe(400);
      expect(res.json.error).toMatchObject({ code: "invalid_request", details: { field } });
      expect((await mgmt.get("/v1/keys?include_disabled=true")).json.data).toHaveLength(before);
    });

    it.each<[string, Record<string, unknown>]>([
      ["limit", { limit: -0.5 }],
      ["limit_reset", { limit_reset: 7 }],
      ["limit_mode", { limit_mode: "HARD" }],
      ["paused", { paused: "true" }],
      ["workspace_id", { workspace_id: 12 }],
      ["class", { class: "management" }],
      ["key", { key: "rt-v1-new" }],
    ])("refuses a bad change (%s) with 400 naming it, and changes nothing", async (field, body) => {
      const created = await createKey(mgmt, { limit: 2 });
      const before = await listedKey(created.hash);
      const res = await mgmt.patch(`/v1/keys/${created.hash}`, body);
      expect(res.status).toBe(400);
      expect(res.json.error.details.field).toBe(field);
      expect(await listedKey(created.hash)).toEqual(before);
    });

    it("refuses a malformed key hash with 400 naming hash, and an unknown one with 404", async () => {
      const malformed = await mgmt.patch("/v1/keys/not-a-hash", { limit: 1 });
      expect(malformed.status).toBe(400);
      expect(malformed.json.error.details.field).toBe("hash");
      expect((await mgmt.del(`/v1/keys/${"0".repeat(64)}`)).status).toBe(404);
    });

    it("refuses include_disabled other than true or false, naming it", async () => {
      const res = await mgmt.get("/v1/keys?include_disabled=maybe");
      expect(res.status).toBe(400);
      expect(res.json.error.details.field).toBe("query.include_disabled");
    });
  });
});
