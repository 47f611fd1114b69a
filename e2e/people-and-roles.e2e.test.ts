import { createHash, createHmac, randomBytes } from "node:crypto";
import { Client } from "pg";
import { Browser, gatewayClient, startStack, type Stack } from "@router/testkit";

/**
 * People, sessions and roles across the separate-process stack: dashboard sessions in a
 * browser-like cookie jar, invitations accepted by signed-in people, and the role table checked
 * on every management route that exists, by the gateway and by the services it forwards to.
 */

type Role = "owner" | "admin" | "member" | "billing" | "readonly";
type Permission = "read" | "usage:read" | "config:write" | "org:write" | "members:write";

/** Spec document 3, "Roles", with the design's reading of admin and readonly. */
const ALLOWED: Record<Permission, Role[]> = {
  read: ["owner", "admin", "member", "billing", "readonly"],
  "usage:read": ["owner", "admin", "member", "billing", "readonly"],
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
  { method: "GET", path: "/v1/routing/defaults", needs: "read" },
  { method: "PUT", path: "/v1/routing/defaults", body: { default_model: 7 }, needs: "org:write" },
];

describe("people, sessions and roles through the separate-process stack", () => {
  let stack: Stack;
  let db: Client;
  let org: { orgId: string; managementKey: string };
  const people: Partial<Record<Role, Browser>> = {};
  let subjects = 0;

  /**
   * A person as a completed identity-provider sign-in leaves them: a user and a session in the
   * database, its two cookies in a fresh jar. (The sign-in routes have their own tests; this suite
   * is about what a signed-in person may do.)
   */
  async function signedInPerson(name: string): Promise<Browser> {
    const userId = `usr_e2e${++subjects}${randomBytes(4).toString("hex")}`;
    const token = randomBytes(32).toString("base64url");
    await db.query(
      `INSERT INTO gateway.users (id, name, email, provider, provider_subject, created_at) VALUES ($1, $2, $3, 'oidc', $1, now())`,
      [userId, name, `${name.toLowerCase()}@example.com`],
    );
    // A first sign-in gives the person an organisation of their own, where the session opens.
    const ownOrg = `org_own${randomBytes(6).toString("hex")}`;
    await db.query(`INSERT INTO gateway.organisations (id, name, slug, created_at) VALUES ($1, $2, $1, now())`, [ownOrg, `${name}'s organisation`]);
    await db.query(`INSERT INTO gateway.members (org_id, user_id, role, joined_at) VALUES ($1, $2, 'owner', now())`, [ownOrg, userId]);
    await db.query(
      `INSERT INTO gateway.sessions (token_hash, org_id, user_id, key_hash, auth_method, created_at, expires_at)
       VALUES ($1, $2, $3, NULL, 'oauth', now(), now() + interval '1 day')`,
      [createHash("sha256").update(token).digest("hex"), ownOrg, userId],
    );
    const browser = new Browser(stack.gatewayUrl);
    const csrf = createHmac("sha256", stack.env.ROUTER_INTERNAL_SECRET ?? "").update(`rt_csrf:${token}`).digest("base64url");
    await browser.jar.setCookie(`rt_session=${token}; Path=/; HttpOnly`, stack.gatewayUrl);
    await browser.jar.setCookie(`rt_csrf=${csrf}; Path=/`, stack.gatewayUrl);
    return browser;
  }

  /** Invites a seat with `role` (the API's roles), accepted by a newly signed-in person. */
  async function seated(name: string, role: "owner" | "member" | "billing"): Promise<Browser> {
    const mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    const invited = await mgmt.post("/v1/organization/invitations", { role });
    expect(invited.status).toBe(201);
    const token = String(invited.json.data.url).split("#token=")[1];
    const browser = await signedInPerson(name);
    const accepted = await browser.post("/v1/invitations/accept", { token });
    expect(accepted.status).toBe(200);
    expect(accepted.body.data).toEqual({ org_id: org.orgId });
    return browser;
  }

  beforeAll(async () => {
    stack = await startStack({ providerBaseUrls: {} });
    db = new Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    org = await stack.createOrg("Roles Co");
    people.owner = await seated("Olive", "owner");
    people.member = await seated("Dev", "member");
    people.billing = await seated("Fin", "billing");
    // The API assigns owner, member and billing; admin and readonly exist in the role enum only.
    // Set before the new session is first used, so no replica has cached the seat's old role.
    for (const [role, name] of [["admin", "Ada"], ["readonly", "Reed"]] as const) {
      const browser = await seated(name, "member");
      await db.query(
        `UPDATE gateway.members SET role = $1 WHERE org_id = $2 AND user_id = (SELECT id FROM gateway.users WHERE name = $3)`,
        [role, org.orgId, name],
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

  const cases = ROUTES.flatMap((route) =>
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

  it.each(ROUTES)("$method $path with the CLI's management key is allowed", async ({ method, path, body }) => {
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

  it("removing a seat ends that person's session at once", async () => {
    const leaver = await seated("Leaver", "member");
    const me = await leaver.get("/v1/organization/members");
    const userId = me.body.data.find((m: { is_you: boolean }) => m.is_you).user_id as string;
    const removed = await people.owner!.request("DELETE", `/v1/organization/members/${userId}`);
    expect(removed.body.data).toEqual({ removed: true });
    expect((await leaver.get("/v1/organization")).status).toBe(401);
  });
});
