import { Wallet, type HDNodeWallet } from "ethers";
import { Client } from "pg";
import { Browser, gatewayClient, startStack, type Stack } from "@router/testkit";
import { seatedPerson, userIdOf } from "./signed-in-people";

/**
 * People, sessions and roles across the separate-process stack: people signed in with a wallet
 * into a browser-like cookie jar, invitations accepted by them, and the role table checked
 * on every management route that exists, by the gateway and by the services it forwards to.
 */

type Role = "owner" | "admin" | "member" | "billing" | "readonly";
type Permission = "read" | "usage:read" | "usage:export" | "billing:read" | "billing:write" | "config:write" | "org:write" | "members:write";

/** The roles and what each may do (libs/access), with this product's reading of admin and readonly. */
const ALLOWED: Record<Permission, Role[]> = {
  read: ["owner", "admin", "member", "billing", "readonly"],
  "usage:read": ["owner", "admin", "member", "billing", "readonly"],
  // Exports are Finance's ability (product rule), with the owner's and admin's.
  "usage:export": ["owner", "admin", "billing"],
  // Developers read billing; Finance reads and buys credits (product rule), as do the owner and admin.
  "billing:read": ["owner", "admin", "member", "billing"],
  "billing:write": ["owner", "admin", "billing"],
  "config:write": ["owner", "admin", "member"],
  "org:write": ["owner", "admin"],
  "members:write": ["owner"],
};

const ZERO_HASH = "0".repeat(64);

/**
 * Every management route that exists, with a body that does no lasting harm when allowed (unknown
 * ids, invalid values): the permission check comes before anything else, so an allowed call answers
 * anything but 401 and 403, and a refused one answers 403 `permission_denied`.
 */
const ROUTES: Array<{ method: string; path: string; body?: unknown; needs: Permission }> = [
  { method: "GET", path: "/v1/keys", needs: "read" },
  { method: "POST", path: "/v1/keys", body: { name: "matrix", limit: -1 }, needs: "config:write" },
  { method: "PATCH", path: `/v1/keys/${ZERO_HASH}`, body: { paused: true }, needs: "config:write" },
  { method: "DELETE", path: `/v1/keys/${ZERO_HASH}`, needs: "config:write" },
  { method: "GET", path: "/v1/provider-keys", needs: "read" },
  { method: "POST", path: "/v1/provider-keys", body: { provider: "not-a-provider", api_key: "x" }, needs: "config:write" },
  { method: "PATCH", path: "/v1/provider-keys/pk_missing", body: { disabled: true }, needs: "config:write" },
  { method: "DELETE", path: "/v1/provider-keys/pk_missing", needs: "config:write" },
  { method: "GET", path: "/v1/organization", needs: "read" },
  { method: "PATCH", path: "/v1/organization", body: { name: "" }, needs: "org:write" },
  { method: "GET", path: "/v1/organization/members", needs: "read" },
  { method: "PATCH", path: "/v1/organization/members/usr_missing", body: { role: "member" }, needs: "members:write" },
  { method: "DELETE", path: "/v1/organization/members/usr_missing", needs: "members:write" },
  { method: "GET", path: "/v1/organization/invitations", needs: "members:write" },
  { method: "POST", path: "/v1/organization/invitations", body: { role: "nobody" }, needs: "members:write" },
  { method: "DELETE", path: "/v1/organization/invitations/inv_missing", needs: "members:write" },
  { method: "GET", path: "/v1/workspaces", needs: "read" },
  { method: "POST", path: "/v1/workspaces", body: { name: "" }, needs: "config:write" },
  { method: "PATCH", path: "/v1/workspaces/ws_missing", body: { name: "x" }, needs: "config:write" },
  { method: "DELETE", path: "/v1/workspaces/ws_missing", needs: "config:write" },
  { method: "GET", path: "/v1/logging", needs: "read" },
  { method: "PUT", path: "/v1/logging", body: { retention_days: 1 }, needs: "config:write" },
  { method: "GET", path: "/v1/auth/organizations", needs: "read" },
  { method: "POST", path: "/v1/auth/pkce/approve", body: { code_challenge_method: "plain" }, needs: "config:write" },
  { method: "GET", path: "/v1/activity", needs: "usage:read" },
  { method: "GET", path: "/v1/activity/upstream", needs: "usage:read" },
  { method: "GET", path: "/v1/activity/requests/gen-missing", needs: "usage:read" },
  { method: "GET", path: "/v1/activity/summary", needs: "usage:read" },
  { method: "GET", path: "/v1/activity/conversations", needs: "usage:read" },
  { method: "GET", path: "/v1/activity/export?month=2020-01", needs: "usage:export" },
  { method: "GET", path: "/v1/generation/gen-missing/content", needs: "usage:read" },
  { method: "GET", path: "/v1/routing/defaults", needs: "read" },
  { method: "PUT", path: "/v1/routing/defaults", body: { default_model: 7 }, needs: "org:write" },
  { method: "GET", path: "/v1/reports/branding", needs: "read" },
  { method: "PUT", path: "/v1/reports/branding", body: { brand_name: 7 }, needs: "config:write" },
  { method: "GET", path: "/v1/reports/workspaces/ws_missing", needs: "usage:read" },
  { method: "GET", path: "/v1/presets", needs: "read" },
  { method: "POST", path: "/v1/presets", body: { slug: "Not A Slug" }, needs: "config:write" },
  { method: "GET", path: "/v1/presets/missing", needs: "read" },
  { method: "POST", path: "/v1/presets/missing/versions", body: { body: {} }, needs: "config:write" },
  { method: "POST", path: "/v1/presets/missing/revert", body: { version: 1 }, needs: "config:write" },
  { method: "DELETE", path: "/v1/presets/missing", needs: "config:write" },
  { method: "GET", path: "/v1/guardrails", needs: "read" },
  { method: "POST", path: "/v1/guardrails", body: { name: "" }, needs: "org:write" },
  { method: "DELETE", path: "/v1/guardrails/gr_missing", needs: "org:write" },
  { method: "POST", path: "/v1/guardrails/gr_missing/assignments", body: {}, needs: "org:write" },
  { method: "GET", path: "/v1/privacy", needs: "read" },
  { method: "PUT", path: "/v1/privacy", body: { zdr: "yes" }, needs: "org:write" },
  { method: "POST", path: "/v1/privacy/preview", body: { zdr: "yes" }, needs: "org:write" },
  { method: "GET", path: "/v1/alerts/runaway", needs: "read" },
  { method: "GET", path: "/v1/alerts/settings", needs: "read" },
  { method: "PUT", path: "/v1/alerts/settings", body: { runaway_action: "halt" }, needs: "config:write" },
  { method: "GET", path: "/v1/workspaces/ws_missing/budgets", needs: "read" },
  { method: "GET", path: "/v1/agents", needs: "read" },
  { method: "GET", path: "/v1/credits", needs: "billing:read" },
  { method: "GET", path: "/v1/credits/purchases", needs: "billing:read" },
  { method: "GET", path: "/v1/credits/purchases/pur_missing/document", needs: "billing:read" },
  // Refused with 409 for those allowed (credits cannot be bought), 403 for the others.
  { method: "POST", path: "/v1/credits/checkout", body: { amount: 10 }, needs: "billing:write" },
  { method: "PUT", path: "/v1/agents/matrix-agent/budgets/daily", body: { limit_usd: -1 }, needs: "config:write" },
  { method: "DELETE", path: "/v1/agents/matrix-agent/budgets/daily", needs: "config:write" },
];

/**
 * The run routes: a role's permission for a management key or session, as above, and open to the
 * organisation's inference keys too (the agent's own). Opening a run takes an inference key only.
 */
const RUN_ROUTES: Array<{ method: string; path: string; body?: unknown; needs: Permission }> = [
  { method: "GET", path: "/v1/runs", needs: "usage:read" },
  { method: "GET", path: "/v1/runs/run_missing", needs: "usage:read" },
  { method: "POST", path: "/v1/runs/run_missing/close", body: { status: "exhausted" }, needs: "config:write" },
  { method: "POST", path: "/v1/runs/run_missing/resume", needs: "config:write" },
];
const OPEN_RUN = { method: "POST", path: "/v1/runs", body: { budget_usd: -1 } };

describe("people, sessions and roles through the separate-process stack", () => {
  let stack: Stack;
  let db: Client;
  let org: { orgId: string; managementKey: string };
  const people: Partial<Record<Role, Browser>> = {};

  const seated = (role: "owner" | "member" | "billing", wallet?: HDNodeWallet) => seatedPerson(stack.gatewayUrl, org, role, wallet);

  beforeAll(async () => {
    // Every person signs in from this one address: more wallet challenges than a minute allows a client.
    stack = await startStack({ providerBaseUrls: {}, extraEnv: { GATEWAY_RATE_LIMITS: JSON.stringify({ wallet_challenge: { per_minute: 1000 } }) } });
    db = new Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    org = await stack.createOrg("Roles Co");
    people.owner = await seated("owner");
    people.member = await seated("member");
    people.billing = await seated("billing");
    // The API assigns owner, member and billing; admin and readonly exist in the role enum only.
    // Set before the new session is first used, so no replica has cached the seat's old role.
    for (const role of ["admin", "readonly"] as const) {
      const wallet = Wallet.createRandom();
      const browser = await seated("member", wallet);
      await db.query(
        `UPDATE console.members SET role = $1
         WHERE org_id = $2 AND user_id = (SELECT id FROM console.users WHERE provider = 'wallet' AND provider_subject = $3)`,
        [role, org.orgId, wallet.address.toLowerCase()],
      );
      people[role] = browser;
    }
  }, 120_000);

  afterAll(async () => {
    await db?.end();
    await stack?.stop();
  });

  afterEach(() => {
    if (stack && process.env.E2E_LOGS) process.stderr.write(stack.logs());
  });

  it("each person acts with the role of their seat", async () => {
    for (const role of ["owner", "admin", "member", "billing", "readonly"] as const) {
      const me = await people[role]!.get("/v1/organization/members");
      expect(me.status).toBe(200);
      expect(me.body.your_role).toBe(role);
    }
  });

  const cases = [...ROUTES, ...RUN_ROUTES].flatMap((route) =>
    (["owner", "admin", "member", "billing", "readonly"] as const).map((role) => ({ ...route, role, allowed: ALLOWED[route.needs].includes(role) })),
  );

  it.each(cases)("$method $path as $role: allowed $allowed", async ({ method, path, body, role, allowed }) => {
    const res = await people[role]!.request(method, path, { body });
    if (allowed) {
      expect([401, 403]).not.toContain(res.status);
    } else {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("permission_denied");
      expect(res.body.error.details).toMatchObject({ role });
    }
  });

  it.each([...ROUTES, ...RUN_ROUTES])("$method $path with the CLI's management key is allowed", async ({ method, path, body }) => {
    const res = await fetch(`${stack.gatewayUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${org.managementKey}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect([401, 403]).not.toContain(res.status);
  });

  it.each(ROUTES)("$method $path with an inference key is refused", async ({ method, path, body }) => {
    const created = await gatewayClient(stack.gatewayUrl, org.managementKey).post("/v1/keys", { name: "inference" });
    const res = await fetch(`${stack.gatewayUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${created.json.data.key as string}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect(res.status).toBe(403);
  });

  it.each(RUN_ROUTES)("$method $path with an inference key is allowed", async ({ method, path, body }) => {
    const created = await gatewayClient(stack.gatewayUrl, org.managementKey).post("/v1/keys", { name: "agent" });
    const res = await fetch(`${stack.gatewayUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${created.json.data.key as string}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect([401, 403]).not.toContain(res.status);
  });

  it("opening a run is refused to every role's session and to the management key, and taken from an inference key", async () => {
    for (const role of ["owner", "admin", "member", "billing", "readonly"] as const) {
      const res = await people[role]!.request(OPEN_RUN.method, OPEN_RUN.path, { body: OPEN_RUN.body });
      expect([res.status, res.body.error.code]).toEqual([403, "permission_denied"]);
    }
    const byManagementKey = await gatewayClient(stack.gatewayUrl, org.managementKey).post(OPEN_RUN.path, OPEN_RUN.body);
    const created = await gatewayClient(stack.gatewayUrl, org.managementKey).post("/v1/keys", { name: "agent" });
    const byInferenceKey = await gatewayClient(stack.gatewayUrl, created.json.data.key as string).post(OPEN_RUN.path, OPEN_RUN.body);
    expect(byManagementKey.status).toBe(403);
    expect([byInferenceKey.status, byInferenceKey.json.error.details.field]).toEqual([400, "budget_usd"]);
  });

  it("a session writes only with the CSRF header, through the gateway and the services it forwards to", async () => {
    const owner = people.owner!;
    const forwarded = await owner.request("PUT", "/v1/routing/defaults", { body: { default_model: null, fallback_models: [] }, csrf: false });
    expect(forwarded.status).toBe(403);
    expect(forwarded.body.error.details.field).toBe("x-csrf-token");
    const withCsrf = await owner.request("PUT", "/v1/routing/defaults", { body: { default_model: null, fallback_models: [] } });
    expect(withCsrf.status).toBe(200);
    expect((await owner.get("/v1/activity")).status).toBe(200);
  });

  it("exchanging the management key gives a session that a sign-out ends on every replica", async () => {
    const replicaUrl = await stack.startGatewayReplica();
    const browser = new Browser(stack.gatewayUrl);
    expect((await browser.post("/v1/auth/exchange", { key: org.managementKey })).status).toBe(200);
    const token = (await browser.cookie("rt_session"))!;
    const onReplica = new Browser(replicaUrl);
    await onReplica.jar.setCookie(`rt_session=${token}; Path=/`, replicaUrl);
    expect((await onReplica.get("/v1/organization")).status).toBe(200);
    expect((await browser.post("/v1/auth/signout")).body.data).toEqual({ ended: true });
    // Redis carries the sign-out to the replica well inside its 10 s cache.
    const deadline = Date.now() + 5_000;
    let status = 200;
    while (status === 200 && Date.now() < deadline) {
      status = (await onReplica.get("/v1/organization")).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(401);
  }, 60_000);

  it("removing a seat ends that person's session at once and revokes the inference keys they made", async () => {
    const leaver = await seated("member");
    const made = await leaver.post("/v1/keys", { name: "leaver's app" });
    expect(made.status).toBe(201);
    const leaversKey = gatewayClient(stack.gatewayUrl, made.body.data.key as string);
    expect((await leaversKey.get("/v1/key")).status).toBe(200);
    const removed = await people.owner!.request("DELETE", `/v1/organization/members/${await userIdOf(leaver)}`);
    expect(removed.body.data).toEqual({ removed: true });
    expect((await leaver.get("/v1/organization")).status).toBe(401);
    const refused = await leaversKey.get("/v1/key");
    expect([refused.status, refused.json.error.message]).toEqual([401, "Authorization: this key has been revoked"]);
  });
});
