import { ledger } from "@router/proto";
import { call, newOrganisation, startHarness, type Harness } from "../harness";
import { signedInPerson } from "./people-fixtures";

let h: Harness;

beforeAll(async () => {
  h = await startHarness("gw_org_ws");
});

afterAll(async () => {
  await h.close();
});

describe("the organisation", () => {
  it("reads with its slug, plan and active seats, and renames trimmed without moving id or slug", async () => {
    const org = await newOrganisation(h, "Rename Me");
    await signedInPerson(h, "Ada", { orgId: org.orgId, role: "member" });
    const read = await call(h.url, "GET", "/v1/organization", { key: org.managementKey });
    expect(read.body.data).toEqual({
      id: org.orgId,
      name: "Rename Me",
      slug: "rename-me",
      plan: "standard",
      created_at: expect.stringMatching(/Z$/),
      members: 1,
    });
    const renamed = await call(h.url, "PATCH", "/v1/organization", { key: org.managementKey, body: { name: "  Renamed Ltd  " } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ id: org.orgId, name: "Renamed Ltd", slug: "rename-me" });
  });

  it.each([
    [{ name: "" }, "name"],
    [{ name: "   " }, "name"],
    [{ name: "x".repeat(81) }, "name"],
    [{ name: "bell\u0007" }, "name"],
    [{ name: 7 }, "name"],
    [{ slug: "new-slug" }, "slug"],
    [{ id: "org_x" }, "id"],
  ])("refuses %j naming %s", async (body, field) => {
    const org = await newOrganisation(h, "Strict Names");
    const res = await call(h.url, "PATCH", "/v1/organization", { key: org.managementKey, body });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe(field);
    expect((await call(h.url, "GET", "/v1/organization", { key: org.managementKey })).body.data.name).toBe("Strict Names");
  });

  it("lets a Developer read but not rename (org:write is owner and admin)", async () => {
    const org = await newOrganisation(h, "Roles Org");
    const dev = await signedInPerson(h, "Dev", { orgId: org.orgId, role: "member" });
    expect((await dev.browser.get("/v1/organization")).status).toBe(200);
    const res = await dev.browser.request("PATCH", "/v1/organization", { body: { name: "Hijacked" } });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("permission_denied");
  });
});

describe("workspaces", () => {
  it("every organisation starts with a default workspace where keys land without workspace_id", async () => {
    const org = await newOrganisation(h, "Default Ws");
    const list = await call(h.url, "GET", "/v1/workspaces", { key: org.managementKey });
    expect(list.body.data).toEqual([
      {
        id: org.workspaceId,
        name: "Default",
        slug: "default",
        created_at: expect.any(String),
        active_keys: 1,
        spend_this_month: 0,
        budgets: [],
        is_current: true,
      },
    ]);
    const key = await call(h.url, "POST", "/v1/keys", { key: org.managementKey, body: { name: "app" } });
    const keys = await call(h.url, "GET", "/v1/keys", { key: org.managementKey });
    expect(keys.body.data.find((k: { hash: string }) => k.hash === key.body.data.hash).workspace_id).toBe(org.workspaceId);
  });

  it("shows each workspace's spend this month and budgets as the ledger reports them", async () => {
    const org = await newOrganisation(h, "Spending");
    h.ledger.workspaces.set(org.workspaceId, {
      spendThisMonthNanodollars: 12_345_000_000n,
      budgets: [{ window: ledger.Window.WINDOW_MONTHLY, limitNanodollars: 50_000_000_000n, includeByok: true }],
    });

    const list = await call(h.url, "GET", "/v1/workspaces", { key: org.managementKey });
    const renamed = await call(h.url, "PATCH", `/v1/workspaces/${org.workspaceId}`, { key: org.managementKey, body: { name: "Main" } });

    const expected = { spend_this_month: 12.345, budgets: [{ interval: "monthly", limit_nanodollars: "50000000000", include_byok: true }] };
    expect(list.body.data[0]).toMatchObject(expected);
    expect(renamed.body.data).toMatchObject(expected);
  });

  it("answers 503 for the workspace list while the ledger cannot be reached", async () => {
    const org = await newOrganisation(h, "Ledgerless");
    h.ledger.down = true;
    try {
      const res = await call(h.url, "GET", "/v1/workspaces", { key: org.managementKey });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe("router.ledger_unavailable");
    } finally {
      h.ledger.down = false;
    }
  });

  it("creates with a ws_ id and a slug of its own, renames, and refuses bad names naming the field", async () => {
    const org = await newOrganisation(h, "Ws Crud");
    const a = await call(h.url, "POST", "/v1/workspaces", { key: org.managementKey, body: { name: "Client A" } });
    expect(a.status).toBe(201);
    expect(a.body.data).toMatchObject({ id: expect.stringMatching(/^ws_/), name: "Client A", slug: "client-a", active_keys: 0, is_current: false });
    const twin = await call(h.url, "POST", "/v1/workspaces", { key: org.managementKey, body: { name: "Client A" } });
    expect(twin.body.data.slug).toMatch(/^client-a-[0-9a-f]{6}$/);
    const renamed = await call(h.url, "PATCH", `/v1/workspaces/${a.body.data.id}`, { key: org.managementKey, body: { name: "Client Alpha" } });
    expect(renamed.body.data).toMatchObject({ id: a.body.data.id, name: "Client Alpha", slug: "client-a" });
    const long = await call(h.url, "POST", "/v1/workspaces", { key: org.managementKey, body: { name: "w".repeat(81) } });
    expect(long.status).toBe(400);
    expect(long.body.error.details.field).toBe("name");
    const unknownField = await call(h.url, "POST", "/v1/workspaces", { key: org.managementKey, body: { name: "x", budget: 5 } });
    expect(unknownField.body.error.details.field).toBe("budget");
  });

  it("holds at most 200 per organisation (409 past it)", async () => {
    const org = await newOrganisation(h, "Ws Cap");
    await h.consoleDb.query(
      `INSERT INTO workspaces (id, org_id, name, slug, created_at)
       SELECT 'ws_cap' || g, $1, 'W' || g, 'w-' || g, now() FROM generate_series(1, 199) g`,
      [org.orgId],
    );
    const res = await call(h.url, "POST", "/v1/workspaces", { key: org.managementKey, body: { name: "one too many" } });
    expect(res.status).toBe(409);
    expect((await call(h.url, "GET", "/v1/workspaces", { key: org.managementKey })).body.data).toHaveLength(200);
  });

  it("removes a workspace: 409 with an active key, 409 for the last, revoked keys lose the link, credentials stay", async () => {
    const org = await newOrganisation(h, "Ws Remove");
    const ws = await call(h.url, "POST", "/v1/workspaces", { key: org.managementKey, body: { name: "Client B" } });
    const id = ws.body.data.id as string;
    const key = await call(h.url, "POST", "/v1/keys", { key: org.managementKey, body: { name: "b-app", workspace_id: id } });
    await call(h.url, "POST", "/v1/provider-keys", { key: org.managementKey, body: { provider: "openai", api_key: "sk-test-123456" } });
    const busy = await call(h.url, "DELETE", `/v1/workspaces/${id}`, { key: org.managementKey });
    expect(busy.status).toBe(409);
    await call(h.url, "DELETE", `/v1/keys/${key.body.data.hash}`, { key: org.managementKey });
    const removed = await call(h.url, "DELETE", `/v1/workspaces/${id}`, { key: org.managementKey });
    expect(removed.status).toBe(200);
    expect(removed.body.data).toEqual({ deleted: true });
    const keys = await call(h.url, "GET", "/v1/keys?include_disabled=true", { key: org.managementKey });
    const revoked = keys.body.data.find((k: { hash: string }) => k.hash === key.body.data.hash);
    expect(revoked).toMatchObject({ disabled: true, workspace_id: null });
    expect((await call(h.url, "GET", "/v1/provider-keys", { key: org.managementKey })).body.data).toHaveLength(1);

    // The default workspace still holds the management key; once that key is moved, it is the last one.
    const last = await call(h.url, "GET", "/v1/workspaces", { key: org.managementKey });
    expect(last.body.data).toHaveLength(1);
    await h.consoleDb.query(`UPDATE keys SET workspace_id = NULL WHERE org_id = $1`, [org.orgId]);
    const lastOne = await call(h.url, "DELETE", `/v1/workspaces/${org.workspaceId}`, { key: org.managementKey });
    expect(lastOne.status).toBe(409);
  });

  it("treats another organisation's workspace id as not found everywhere", async () => {
    const mine = await newOrganisation(h, "Ws Mine");
    const theirs = await newOrganisation(h, "Ws Theirs");
    for (const [method, path, body] of [
      ["PATCH", `/v1/workspaces/${theirs.workspaceId}`, { name: "x" }],
      ["DELETE", `/v1/workspaces/${theirs.workspaceId}`, undefined],
      ["POST", "/v1/keys", { name: "x", workspace_id: theirs.workspaceId }],
    ] as const) {
      const res = await call(h.url, method, path, { key: mine.managementKey, body });
      expect(res.status).toBe(404);
    }
    const malformed = await call(h.url, "DELETE", "/v1/workspaces/nope", { key: mine.managementKey });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.details.field).toBe("id");
  });

  it("lets Finance list but not create workspaces", async () => {
    const org = await newOrganisation(h, "Ws Finance");
    const finance = await signedInPerson(h, "Fin", { orgId: org.orgId, role: "billing" });
    expect((await finance.browser.get("/v1/workspaces")).status).toBe(200);
    const res = await finance.browser.post("/v1/workspaces", { name: "nope" });
    expect(res.status).toBe(403);
    expect(res.body.error.details).toEqual({ role: "billing", needs: "config:write" });
  });
});

describe("logging settings", () => {
  it("reads the defaults of an organisation that never configured them", async () => {
    const org = await newOrganisation(h, "Log Defaults");
    const res = await call(h.url, "GET", "/v1/logging", { key: org.managementKey });
    expect(res.body.data).toEqual({
      enabled: false,
      key_include: [],
      key_exclude: [],
      retention_days: 90,
      locked: false,
      purposes: ["self_access"],
      consented_at: null,
    });
  });

  it("saves settings with consent, refuses enabled true, short retention and purposes without self_access", async () => {
    const org = await newOrganisation(h, "Log Set");
    const key = await call(h.url, "POST", "/v1/keys", { key: org.managementKey, body: { name: "app" } });
    const saved = await call(h.url, "PUT", "/v1/logging", {
      key: org.managementKey,
      body: { key_exclude: [key.body.data.hash], retention_days: 120, purposes: ["self_access", "rag"] },
    });
    expect(saved.status).toBe(200);
    expect(saved.body.data).toMatchObject({ key_exclude: [key.body.data.hash], retention_days: 120, purposes: ["self_access", "rag"] });
    expect(saved.body.data.consented_at).toBe(h.clock.now().toISOString());
    for (const [body, field] of [
      [{ enabled: true }, "enabled"],
      [{ retention_days: 89 }, "retention_days"],
      [{ purposes: ["rag"] }, "purposes"],
      [{ key_include: ["not-a-hash"] }, "key_include.0"],
      [{ key_include: ["a".repeat(64)] }, "key_include"],
      [{ colour: "red" }, "colour"],
    ] as const) {
      const res = await call(h.url, "PUT", "/v1/logging", { key: org.managementKey, body });
      expect(res.status).toBe(400);
      expect(res.body.error.details.field).toBe(field);
    }
    expect((await call(h.url, "GET", "/v1/logging", { key: org.managementKey })).body.data.retention_days).toBe(120);
  });

  it("freezes locked settings until a request clears the lock", async () => {
    const org = await newOrganisation(h, "Log Lock");
    expect((await call(h.url, "PUT", "/v1/logging", { key: org.managementKey, body: { locked: true, retention_days: 100 } })).status).toBe(200);
    const frozen = await call(h.url, "PUT", "/v1/logging", { key: org.managementKey, body: { retention_days: 365 } });
    expect(frozen.status).toBe(409);
    const unlocked = await call(h.url, "PUT", "/v1/logging", { key: org.managementKey, body: { locked: false, retention_days: 365 } });
    expect(unlocked.body.data).toMatchObject({ locked: false, retention_days: 365 });
  });

  it("is never configured with an inference key, nor by Finance", async () => {
    const org = await newOrganisation(h, "Log Who");
    const inference = await call(h.url, "POST", "/v1/keys", { key: org.managementKey, body: { name: "app" } });
    const byKey = await call(h.url, "PUT", "/v1/logging", { key: inference.body.data.key, body: { retention_days: 100 } });
    expect(byKey.status).toBe(403);
    const finance = await signedInPerson(h, "Finn", { orgId: org.orgId, role: "billing" });
    expect((await finance.browser.request("PUT", "/v1/logging", { body: { retention_days: 100 } })).status).toBe(403);
    const dev = await signedInPerson(h, "Devi", { orgId: org.orgId, role: "member" });
    expect((await dev.browser.request("PUT", "/v1/logging", { body: { retention_days: 100 } })).status).toBe(200);
  });
});
