import { findKeyByHash } from "../../console/src/keys/key-store";
import { TEST_REDIS_URL, waitFor } from "@router/testkit";
import { call, newOrganisation, startHarness, type Harness } from "./harness";

let h: Harness;
let mgmt: string;
let orgId: string;
let workspaceId: string;

beforeAll(async () => {
  h = await startHarness("gwkeys");
  const org = await newOrganisation(h);
  mgmt = org.managementKey;
  orgId = org.orgId;
  workspaceId = org.workspaceId;
});

afterAll(async () => {
  await h.close();
});

async function createKey(body: Record<string, unknown> = {}) {
  const res = await call(h.url, "POST", "/v1/keys", { key: mgmt, body: { name: "app", ...body } });
  expect(res.status).toBe(201);
  return res.body.data as { key: string; hash: string; name: string | null; class: string };
}

async function listed(hash: string, query = "") {
  const res = await call(h.url, "GET", `/v1/keys${query}`, { key: mgmt });
  expect(res.status).toBe(200);
  return (res.body.data as Array<Record<string, unknown>>).find((k) => k.hash === hash);
}

describe("creating keys", () => {
  it("returns the plaintext once with its hash, name and class, and stores only the hash", async () => {
    const created = await createKey({ name: "checkout bot" });
    expect(created.key).toMatch(/^rt-v1-[0-9A-Za-z]{43}$/);
    expect(created.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(created).toMatchObject({ name: "checkout bot", class: "inference" });
    const stored = await h.consoleDb.query<Record<string, unknown>>("SELECT * FROM keys WHERE hash = $1", [created.hash]);
    expect(JSON.stringify(stored.rows, (_k, v) => (typeof v === "bigint" ? v.toString() : v))).not.toContain(
      created.key.slice("rt-v1-".length, "rt-v1-".length + 20),
    );
  });

  it("mints a management key with the rt-mgmt- prefix when asked for class management", async () => {
    const created = await createKey({ class: "management" });
    expect(created.key).toMatch(/^rt-mgmt-[0-9A-Za-z]{43}$/);
    const res = await call(h.url, "GET", "/v1/keys", { key: created.key });
    expect(res.status).toBe(200);
  });

  it("lists a new key with every field of the key row, in the caller's workspace by default", async () => {
    const created = await createKey({ limit: 12.5, limit_reset: "monthly", limit_mode: "soft", include_byok_in_limit: true });
    h.ledger.windowEndsAtMs = BigInt(Date.parse("2026-12-01T00:00:00.000Z"));
    const row = await listed(created.hash);
    expect(row).toEqual({
      hash: created.hash,
      prefix: created.key.slice(0, 10),
      name: "app",
      label: `${created.key.slice(0, 10)}...${created.key.slice(-4)}`,
      class: "inference",
      disabled: false,
      limit: 12.5,
      limit_nanodollars: "12500000000",
      limit_reset: "monthly",
      limit_mode: "soft",
      include_byok_in_limit: true,
      workspace_id: workspaceId,
      usage: 0,
      limit_remaining: 12.5,
      limit_resets_at: "2026-12-01T00:00:00.000Z",
      paused: false,
      paused_reason: null,
      created_at: "2026-11-21T10:00:00.000Z",
      updated_at: "2026-11-21T10:00:00.000Z",
      expires_at: null,
      external_user: null,
    });
  });

  it("creates a key in another workspace of the organisation when workspace_id names one", async () => {
    await h.consoleDb.query("INSERT INTO workspaces (id, org_id, name, slug, created_at) VALUES ('ws_second', $1, 'Client B', 'client-b', now())", [orgId]);
    const created = await createKey({ workspace_id: "ws_second" });
    expect((await listed(created.hash))?.workspace_id).toBe("ws_second");
    // The caller resolved from the key carries the workspace's current name (events and reports use it).
    expect((await findKeyByHash(h.consoleDb, created.hash))?.workspaceName).toBe("Client B");
    await h.consoleDb.query("UPDATE workspaces SET name = 'Client B2' WHERE id = 'ws_second'");
    expect((await findKeyByHash(h.consoleDb, created.hash))?.workspaceName).toBe("Client B2");
  });

  it("answers 404 for another organisation's workspace", async () => {
    const other = await newOrganisation(h, "Other");
    const res = await call(h.url, "POST", "/v1/keys", { key: mgmt, body: { workspace_id: other.workspaceId } });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
  });
});

describe("usage as the ledger measures it", () => {
  it("asks the ledger with each key's ceiling and reports usage, remaining and the window end", async () => {
    const created = await createKey({ limit: 10, limit_reset: "daily", limit_mode: "hard" });
    h.ledger.used.set(created.hash, 2_500_000_000n);
    h.ledger.windowEndsAtMs = BigInt(Date.parse("2026-11-22T00:00:00.000Z"));
    const row = await listed(created.hash);
    expect(row).toMatchObject({ usage: 2.5, limit_remaining: 7.5, limit_resets_at: "2026-11-22T00:00:00.000Z" });
    const asked = h.ledger.usageRequests.at(-1)?.ceilings.find((c) => c.subjectId === created.hash);
    expect(asked).toEqual({
      subjectKind: "key",
      subjectId: created.hash,
      limitNanodollars: 10_000_000_000n,
      window: 1,
      mode: 1,
      includeByok: false,
      subjectName: "app",
    });
  });

  it("reports a negative remaining once a soft ceiling is passed", async () => {
    const created = await createKey({ limit: 1, limit_mode: "soft" });
    h.ledger.used.set(created.hash, 1_250_000_000n);
    expect(await listed(created.hash)).toMatchObject({ usage: 1.25, limit_remaining: -0.25, limit_resets_at: null });
  });

  it("reports null usage, remaining and reset for a key with no ceiling", async () => {
    const created = await createKey();
    h.ledger.used.set(created.hash, 5_000_000_000n);
    expect(await listed(created.hash)).toMatchObject({ limit: null, usage: null, limit_remaining: null, limit_resets_at: null });
  });

  it("shows the calling key its own usage on GET /v1/key", async () => {
    const created = await createKey({ limit: 3, limit_reset: "weekly", limit_mode: "soft", include_byok_in_limit: true });
    h.ledger.used.set(created.hash, 1_000_000_000n);
    const res = await call(h.url, "GET", "/v1/key", { key: created.key });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      label: `${created.key.slice(0, 10)}...${created.key.slice(-4)}`,
      limit: 3,
      limit_remaining: 2,
      usage: 1,
      limit_reset: "weekly",
      limit_mode: "soft",
      include_byok_in_limit: true,
      is_free_tier: true,
    });
  });


  it("reports zero usage and no remaining for a calling key with no ceiling, without asking the ledger", async () => {
    const created = await createKey();
    const asked = h.ledger.usageRequests.length;
    const res = await call(h.url, "GET", "/v1/key", { key: created.key });
    expect(res.body.data).toMatchObject({ limit: null, limit_remaining: null, usage: 0 });
    expect(h.ledger.usageRequests).toHaveLength(asked);
  });
});

describe("updating keys", () => {
  it("changes the ceiling, window, mode and byok flag, and reports the product's fields", async () => {
    const created = await createKey({ limit: 5 });
    h.clock.advance(60_000);
    const res = await call(h.url, "PATCH", `/v1/keys/${created.hash}`, {
      key: mgmt,
      body: { limit: 20, limit_reset: "weekly", limit_mode: "soft", include_byok_in_limit: true },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      hash: created.hash,
      name: "app",
      class: "inference",
      limit: 20,
      limit_reset: "weekly",
      limit_mode: "soft",
      include_byok_in_limit: true,
      paused: false,
      paused_reason: null,
    });
    const row = await listed(created.hash);
    expect(row).toMatchObject({ limit_nanodollars: "20000000000", updated_at: "2026-11-21T10:01:00.000Z" });
  });

  it("removes the ceiling with limit null", async () => {
    const created = await createKey({ limit: 5 });
    const res = await call(h.url, "PATCH", `/v1/keys/${created.hash}`, { key: mgmt, body: { limit: null } });
    expect(res.body.data.limit).toBeNull();
    expect((await listed(created.hash))?.limit_nanodollars).toBeNull();
  });

  it("moves a key to another workspace of the same organisation, and refuses another organisation's", async () => {
    const created = await createKey();
    await h.consoleDb.query("INSERT INTO workspaces (id, org_id, name, slug, created_at) VALUES ('ws_third', $1, 'Client C', 'client-c', now())", [orgId]);
    const moved = await call(h.url, "PATCH", `/v1/keys/${created.hash}`, { key: mgmt, body: { workspace_id: "ws_third" } });
    expect(moved.body.data.workspace_id).toBe("ws_third");
    const other = await newOrganisation(h, "Elsewhere");
    const refused = await call(h.url, "PATCH", `/v1/keys/${created.hash}`, { key: mgmt, body: { workspace_id: other.workspaceId } });
    expect(refused.status).toBe(404);
  });

  it("pauses a key by hand so it answers 403 key_paused at once, and resumes it", async () => {
    const created = await createKey();
    expect((await call(h.url, "GET", "/v1/key", { key: created.key })).status).toBe(200);
    const paused = await call(h.url, "PATCH", `/v1/keys/${created.hash}`, { key: mgmt, body: { paused: true } });
    expect(paused.body.data).toMatchObject({ paused: true, paused_reason: "manual" });
    const refused = await call(h.url, "GET", "/v1/key", { key: created.key });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("key_paused");
    const resumed = await call(h.url, "PATCH", `/v1/keys/${created.hash}`, { key: mgmt, body: { paused: false } });
    expect(resumed.body.data).toMatchObject({ paused: false, paused_reason: null });
    expect((await call(h.url, "GET", "/v1/key", { key: created.key })).status).toBe(200);
  });

  it("resumes a key a runaway flag paused and clears its reason", async () => {
    const created = await createKey();
    await h.consoleDb.query("UPDATE keys SET paused = true, paused_reason = 'runaway' WHERE hash = $1", [created.hash]);
    expect((await listed(created.hash))?.paused_reason).toBe("runaway");
    const res = await call(h.url, "PATCH", `/v1/keys/${created.hash}`, { key: mgmt, body: { paused: false } });
    expect(res.body.data).toMatchObject({ paused: false, paused_reason: null });
  });

  it("refuses to change class, name or secret, naming the field", async () => {
    const created = await createKey();
    for (const field of ["class", "name", "key"]) {
      const res = await call(h.url, "PATCH", `/v1/keys/${created.hash}`, { key: mgmt, body: { [field]: "x", limit: 1 } });
      expect(res.status).toBe(400);
      expect(res.body.error.details.field).toBe(field);
    }
  });

  it("answers 404 for another organisation's key", async () => {
    const other = await newOrganisation(h, "Rival");
    const theirs = await call(h.url, "POST", "/v1/keys", { key: other.managementKey, body: { name: "theirs" } });
    const hash = theirs.body.data.hash as string;
    expect((await call(h.url, "PATCH", `/v1/keys/${hash}`, { key: mgmt, body: { paused: true } })).status).toBe(404);
    expect((await call(h.url, "DELETE", `/v1/keys/${hash}`, { key: mgmt })).status).toBe(404);
    expect(await listed(hash)).toBeUndefined();
    expect((await call(h.url, "GET", "/v1/key", { key: theirs.body.data.key })).status).toBe(200);
  });
});

describe("revoking keys", () => {
  it("refuses the key at once on this instance and lists it only with include_disabled", async () => {
    const created = await createKey({ limit: 4 });
    expect((await call(h.url, "GET", "/v1/key", { key: created.key })).status).toBe(200);
    const res = await call(h.url, "DELETE", `/v1/keys/${created.hash}`, { key: mgmt });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { deleted: true } });
    // The console named the key for the gateway's cache; the client never sees that message.
    expect(res.headers.get("x-router-evict-keys")).toBeNull();
    expect(res.headers.get("x-router-evict-sessions")).toBeNull();
    // A route the gateway serves from its own auth cache refuses it at once, the clock unmoved.
    expect((await call(h.url, "GET", "/v1/responses/resp_unknown", { key: created.key })).status).toBe(401);
    const refused = await call(h.url, "GET", "/v1/key", { key: created.key });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe("unauthorized");
    expect(await listed(created.hash)).toBeUndefined();
    expect(await listed(created.hash, "?include_disabled=true")).toMatchObject({ disabled: true, usage: null, limit_remaining: null });
  });

  it("refuses on another instance within the 10-second cache TTL and never later", async () => {
    const other = await h.startAnother();
    const otherUrl = `http://127.0.0.1:${other.port}`;
    const created = await createKey();
    // A route the gateway serves from its own auth cache: an unknown stored response is a 404 to a live key.
    const probe = async () => (await call(otherUrl, "GET", "/v1/responses/resp_unknown", { key: created.key })).status;
    expect(await probe()).toBe(404);
    await call(h.url, "DELETE", `/v1/keys/${created.hash}`, { key: mgmt });
    h.clock.advance(9_999);
    expect(await probe()).toBe(404);
    h.clock.advance(1);
    expect(await probe()).toBe(401);
    // The console, which owns the key, refuses it at once on a route it serves.
    expect((await call(otherUrl, "GET", "/v1/key", { key: created.key })).status).toBe(401);
  });

  it("refuses changes to a revoked key with 409", async () => {
    const created = await createKey();
    await call(h.url, "DELETE", `/v1/keys/${created.hash}`, { key: mgmt });
    const res = await call(h.url, "PATCH", `/v1/keys/${created.hash}`, { key: mgmt, body: { limit: 1 } });
    expect(res.status).toBe(409);
  });
});

// Last: it stops the ledger for good.
describe("when the ledger is down", () => {
  it("answers 503 naming the ledger when the ledger cannot be reached", async () => {
    const created = await createKey({ limit: 3 });
    await h.ledger.stop();
    const res = await call(h.url, "GET", "/v1/keys", { key: mgmt });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toMatch(/^router\.ledger_/);
    expect((await call(h.url, "GET", "/v1/key", { key: created.key })).status).toBe(503);
  });
});

describe("replicas sharing Redis", () => {
  it("refuse a key revoked through another replica at once, and a key paused there too", async () => {
    const shared = await startHarness("gwkeysredis", { redisUrl: TEST_REDIS_URL });
    try {
      const other = await shared.startAnother();
      const otherUrl = `http://127.0.0.1:${other.port}`;
      const org = await newOrganisation(shared);
      const make = async () => (await call(shared.url, "POST", "/v1/keys", { key: org.managementKey, body: { name: "app" } })).body.data as { key: string; hash: string };
      // An unknown stored response: 404 to a live key, through the replica's own auth cache.
      const probe = async (key: string) => (await call(otherUrl, "GET", "/v1/responses/resp_unknown", { key })).status;
      const revoked = await make();
      const paused = await make();
      expect([await probe(revoked.key), await probe(paused.key)]).toEqual([404, 404]);
      await call(shared.url, "DELETE", `/v1/keys/${revoked.hash}`, { key: org.managementKey });
      await call(shared.url, "PATCH", `/v1/keys/${paused.hash}`, { key: org.managementKey, body: { paused: true } });
      // Redis carries the eviction: no clock moves, the other replica asks the console again.
      await waitFor(async () => (await probe(revoked.key)) === 401);
      await waitFor(async () => (await probe(paused.key)) === 403);
    } finally {
      await shared.close();
    }
  });
});
