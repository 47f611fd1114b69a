import { createHttpApp, finishApp, identityOf, listen, requireIdentity, type IdentityPublicKeys, type RunningHttpServer } from "@router/http-kit";
import type { Request, Response } from "express";
import { call, newOrganisation, publicKeysOf, silentLog, startHarness, testSecrets, type Harness } from "./harness";

let h: Harness;
let upstream: RunningHttpServer;
let mgmt: string;
let orgId: string;
let inference: { key: string; hash: string };
const seen: Array<{ headers: Record<string, unknown> }> = [];

/** Stands in for the activity and routing services: verifies the signed identity like they do. */
async function startUpstream(publicKeys: () => IdentityPublicKeys): Promise<RunningHttpServer> {
  const app = createHttpApp({ log: silentLog });
  const echo = (req: Request, res: Response) => {
    seen.push({ headers: { ...req.headers } });
    res.setHeader("x-upstream", "yes");
    res.status(req.method === "POST" ? 201 : 200).json({
      identity: req.identity ?? null,
      method: req.method,
      url: req.originalUrl,
      body: req.body ?? null,
    });
  };
  const verify = (req: Request, res: Response, next: () => void) => requireIdentity(publicKeys())(req, res, next);
  app.get("/v1/activity/export", verify, (req: Request, res: Response) => {
    identityOf(req);
    res.setHeader("content-type", "text/csv");
    res.write("created_at,request_id\n");
    for (let i = 0; i < 2000; i++) res.write(`2026-11-21T10:00:00.000Z,gen-${i}\n`);
    res.end();
  });
  app.all(["/v1/activity", "/v1/activity/*rest", "/v1/generation", "/v1/generation/*rest"], verify, echo);
  app.get(["/v1/models", "/v1/models/*rest", "/v1/providers"], echo);
  app.all("/v1/routing/defaults", verify, echo);
  app.all(["/v1/workspaces/*rest", "/v1/agents", "/v1/agents/*rest"], verify, echo);
  app.all(["/v1/reports/branding", "/v1/reports/workspaces/*rest"], verify, echo);
  app.all(["/v1/alerts/channels", "/v1/alerts/channels/*rest", "/v1/alerts/deliveries"], verify, echo);
  app.all(["/v1/broadcast/destinations", "/v1/broadcast/destinations/*rest"], verify, echo);
  app.all(["/v1/presets", "/v1/presets/*rest"], verify, echo);
  return listen(finishApp(app, silentLog), 0);
}

beforeAll(async () => {
  let publicKeys: IdentityPublicKeys | undefined;
  upstream = await startUpstream(() => {
    if (!publicKeys) throw new Error("the gateway is not started yet");
    return publicKeys;
  });
  const url = `http://127.0.0.1:${upstream.port}`;
  h = await startHarness("gwproxy", { activityUrl: url, routingUrl: url, ledgerUrl: url, reportsUrl: url, alertsUrl: url, broadcastUrl: url });
  publicKeys = publicKeysOf(h.secrets);
  const org = await newOrganisation(h);
  mgmt = org.managementKey;
  orgId = org.orgId;
  inference = (await call(h.url, "POST", "/v1/keys", { key: mgmt, body: { name: "app key" } })).body.data;
});

afterAll(async () => {
  await h.close();
  await upstream.close();
});

describe("forwarding to the services that own a route", () => {
  it("forwards activity with a signed identity the owner verifies, keeping path and query", async () => {
    const res = await call(h.url, "GET", "/v1/activity?limit=5&days=7", { key: mgmt });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-upstream")).toBe("yes");
    expect(res.body).toMatchObject({
      method: "GET",
      url: "/v1/activity?limit=5&days=7",
      identity: { orgId, credential: "management", role: "owner", operator: false, userId: null },
    });
  });

  it("checks a named workspace before forwarding and adds its name to the identity", async () => {
    const own = await newOrganisation(h, "Named");
    const ok = await call(h.url, "GET", `/v1/activity/summary?workspace=${own.workspaceId}`, { key: own.managementKey });
    expect(ok.status).toBe(200);
    expect(ok.body.identity).toMatchObject({ orgId: own.orgId, workspace: { id: own.workspaceId, name: expect.any(String) } });
    const forwarded = seen.length;

    const malformed = await call(h.url, "GET", "/v1/activity?workspace=nope", { key: own.managementKey });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.details.field).toBe("workspace");
    const theirs = await call(h.url, "GET", `/v1/activity/export?workspace=${own.workspaceId}`, { key: mgmt });
    expect(theirs.status).toBe(404);
    const unknown = await call(h.url, "GET", "/v1/activity?workspace=ws_doesnotexist", { key: mgmt });
    expect(unknown.status).toBe(404);
    expect(seen.length).toBe(forwarded);

    const none = await call(h.url, "GET", "/v1/activity", { key: mgmt });
    expect(none.body.identity.workspace).toBeUndefined();
  });

  it("forwards alert channels, tests and deliveries to alerts, but not the runaway service's alert routes", async () => {
    const add = await call(h.url, "POST", "/v1/alerts/channels", { key: mgmt, body: { kind: "webhook" } });
    expect(add.status).toBe(201);
    expect(add.body).toMatchObject({ url: "/v1/alerts/channels", body: { kind: "webhook" }, identity: { orgId, role: "owner" } });
    expect((await call(h.url, "POST", "/v1/alerts/channels/ch_1/test", { key: mgmt })).body.url).toBe("/v1/alerts/channels/ch_1/test");
    expect((await call(h.url, "DELETE", "/v1/alerts/channels/ch_1", { key: mgmt })).body.method).toBe("DELETE");
    expect((await call(h.url, "GET", "/v1/alerts/deliveries", { key: mgmt })).body.url).toBe("/v1/alerts/deliveries");
    expect((await call(h.url, "GET", "/v1/alerts/deliveries", { key: inference.key })).status).toBe(403);
    expect((await call(h.url, "GET", "/v1/alerts/settings", { key: mgmt })).headers.get("x-upstream")).toBeNull();
  });

  it("forwards workspace budgets to the ledger, checking the workspace of a write but not of a read", async () => {
    const own = await newOrganisation(h, "Budgets");
    const key = own.managementKey;

    const put = await call(h.url, "PUT", `/v1/workspaces/${own.workspaceId}/budgets/daily`, { key, body: { limit_usd: 5 } });
    expect(put.body).toMatchObject({
      method: "PUT",
      url: `/v1/workspaces/${own.workspaceId}/budgets/daily`,
      body: { limit_usd: 5 },
      identity: { orgId: own.orgId, workspace: { id: own.workspaceId } },
    });
    const list = await call(h.url, "GET", "/v1/workspaces/ws_unknown1/budgets", { key });
    expect(list.body).toMatchObject({ url: "/v1/workspaces/ws_unknown1/budgets", identity: { orgId: own.orgId } });
    const forwarded = seen.length;

    const theirs = await call(h.url, "PUT", `/v1/workspaces/${own.workspaceId}/budgets/daily`, { key: mgmt, body: { limit_usd: 5 } });
    const theirDelete = await call(h.url, "DELETE", `/v1/workspaces/${own.workspaceId}/budgets/daily`, { key: mgmt });
    const malformed = await call(h.url, "PUT", "/v1/workspaces/client-a/budgets/daily", { key, body: { limit_usd: 5 } });
    expect([theirs.status, theirDelete.status, malformed.status]).toEqual([404, 404, 400]);
    expect(malformed.body.error.details.field).toBe("id");
    expect(seen.length).toBe(forwarded);
  });

  it("serves the workspace routes it owns itself, forwarding only the budgets", async () => {
    const before = seen.length;
    const list = await call(h.url, "GET", "/v1/workspaces", { key: mgmt });
    expect(list.status).toBe(200);
    expect(list.body.data[0]).toMatchObject({ spend_this_month: 0, budgets: [] });
    expect(seen.length).toBe(before);
  });

  it("forwards agents and agent budgets, checking a workspace named in the body or the query", async () => {
    const own = await newOrganisation(h, "Agents");
    const key = own.managementKey;

    expect((await call(h.url, "GET", "/v1/agents", { key })).body).toMatchObject({ url: "/v1/agents", identity: { orgId: own.orgId } });
    const scoped = await call(h.url, "PUT", "/v1/agents/planner/budgets/weekly", {
      key,
      body: { limit_usd: 3, workspace_id: own.workspaceId },
    });
    expect(scoped.body.identity.workspace).toMatchObject({ id: own.workspaceId });
    const orgWide = await call(h.url, "PUT", "/v1/agents/planner/budgets/weekly", { key, body: { limit_usd: 3, workspace_id: null } });
    expect(orgWide.status).toBe(200);
    expect(orgWide.body.identity.workspace).toBeUndefined();
    const forwarded = seen.length;

    const theirBody = await call(h.url, "PUT", "/v1/agents/planner/budgets/weekly", {
      key: mgmt,
      body: { limit_usd: 3, workspace_id: own.workspaceId },
    });
    const theirQuery = await call(h.url, "DELETE", `/v1/agents/planner/budgets/weekly?workspace_id=${own.workspaceId}`, { key: mgmt });
    const malformed = await call(h.url, "PUT", "/v1/agents/planner/budgets/weekly", { key, body: { limit_usd: 3, workspace_id: 7 } });
    expect([theirBody.status, theirQuery.status, malformed.status]).toEqual([404, 404, 400]);
    expect(malformed.body.error.details.field).toBe("workspace_id");
    expect(seen.length).toBe(forwarded);
  });

  it("never passes the caller's bearer key on", async () => {
    await call(h.url, "GET", "/v1/activity/summary", { key: mgmt });
    const last = seen.at(-1);
    expect(last?.headers.authorization).toBeUndefined();
  });

  it("forwards a JSON body on a write", async () => {
    const res = await call(h.url, "POST", "/v1/activity/anything", { key: mgmt, body: { a: 1 } });
    expect(res.status).toBe(201);
    expect(res.body.body).toEqual({ a: 1 });
  });

  it("streams a large response through", async () => {
    const res = await call(h.url, "GET", "/v1/activity/export?month=2026-11", { key: mgmt });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/csv");
    const lines = String(res.body).trim().split("\n");
    expect(lines).toHaveLength(2001);
    expect(lines.at(-1)).toBe("2026-11-21T10:00:00.000Z,gen-1999");
  });

  it("forwards the generation record for an inference key, with that key's identity", async () => {
    const res = await call(h.url, "GET", "/v1/generation?id=gen-abc", { key: inference.key });
    expect(res.status).toBe(200);
    expect(res.body.identity).toMatchObject({ orgId, credential: "inference", keyHash: inference.hash, keyName: "app key" });
  });

  it("forwards broadcast destinations and their test operation for a management caller", async () => {
    const list = await call(h.url, "GET", "/v1/broadcast/destinations", { key: mgmt });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ method: "GET", url: "/v1/broadcast/destinations", identity: { orgId, credential: "management" } });
    const test = await call(h.url, "POST", "/v1/broadcast/destinations/dst_abc/test", { key: mgmt, body: {} });
    expect(test.body).toMatchObject({ method: "POST", url: "/v1/broadcast/destinations/dst_abc/test" });
    const patch = await call(h.url, "PATCH", "/v1/broadcast/destinations/dst_abc", { key: mgmt, body: { disabled: true } });
    expect(patch.body).toMatchObject({ method: "PATCH", body: { disabled: true } });
    expect((await call(h.url, "GET", "/v1/broadcast/destinations")).status).toBe(401);
    expect((await call(h.url, "GET", "/v1/broadcast/destinations", { key: inference.key })).status).toBe(403);
  });

  it("refuses activity without a key, and the generation record for a management key", async () => {
    expect((await call(h.url, "GET", "/v1/activity")).status).toBe(401);
    const res = await call(h.url, "GET", "/v1/generation?id=gen-abc", { key: mgmt });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("permission_denied");
  });

  it("never forwards an inference key to stored content, and forwards a management key with its identity", async () => {
    const forwarded = seen.length;
    const refused = await call(h.url, "GET", "/v1/generation/gen-abc/content", { key: inference.key });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("permission_denied");
    expect(seen.length).toBe(forwarded);

    const allowed = await call(h.url, "GET", "/v1/generation/gen-abc/content", { key: mgmt });
    expect(allowed.status).toBe(200);
    expect(allowed.body).toMatchObject({ url: "/v1/generation/gen-abc/content", identity: { orgId, credential: "management" } });
  });

  it("serves the public catalog routes without a key", async () => {
    for (const path of ["/v1/models?limit=2", "/v1/models/openai/gpt-4o/endpoints", "/v1/providers"]) {
      const res = await call(h.url, "GET", path);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ url: path, identity: null });
    }
  });

  it("forwards reading and setting the routing defaults to routing with the signed owner identity and the body", async () => {
    const read = await call(h.url, "GET", "/v1/routing/defaults", { key: mgmt });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      method: "GET",
      url: "/v1/routing/defaults",
      identity: { orgId, credential: "management", role: "owner", userId: null },
    });

    const body = { default_model: "openai/gpt-4o-mini", fallback_models: ["anthropic/claude-3.5-haiku"] };
    const set = await call(h.url, "PUT", "/v1/routing/defaults", { key: mgmt, body });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ method: "PUT", body, identity: { orgId, credential: "management" } });
    expect(seen.at(-1)?.headers.authorization).toBeUndefined();
  });

  it("refuses the routing defaults to an inference key at the gateway, and to a caller without a key", async () => {
    const before = seen.length;
    for (const method of ["GET", "PUT"]) {
      const res = await call(h.url, method, "/v1/routing/defaults", { key: inference.key, body: method === "PUT" ? {} : undefined });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("permission_denied");
    }
    expect((await call(h.url, "GET", "/v1/routing/defaults")).status).toBe(401);
    expect(seen.length).toBe(before);
  });

  it("forwards report branding with the organisation's current name in the signed identity, and its body on a write", async () => {
    const org = await newOrganisation(h, "Branded Agency");
    const read = await call(h.url, "GET", "/v1/reports/branding", { key: org.managementKey });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ url: "/v1/reports/branding", identity: { orgId: org.orgId, orgName: "Branded Agency", role: "owner" } });

    const body = { brand_name: "Agency", brand_footer: null };
    const set = await call(h.url, "PUT", "/v1/reports/branding", { key: org.managementKey, body });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ method: "PUT", body, identity: { orgId: org.orgId, orgName: "Branded Agency" } });
  });

  it("forwards a client report only for a workspace of the caller's organisation, with its current name", async () => {
    const org = await newOrganisation(h, "Report Agency");
    const ok = await call(h.url, "GET", `/v1/reports/workspaces/${org.workspaceId}?month=2026-11`, { key: org.managementKey });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      url: `/v1/reports/workspaces/${org.workspaceId}?month=2026-11`,
      identity: { orgId: org.orgId, orgName: "Report Agency", workspace: { id: org.workspaceId, name: expect.any(String) } },
    });
    const forwarded = seen.length;

    const theirs = await call(h.url, "GET", `/v1/reports/workspaces/${org.workspaceId}`, { key: mgmt });
    expect(theirs.status).toBe(404);
    const malformed = await call(h.url, "GET", "/v1/reports/workspaces/not-a-workspace", { key: mgmt });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.details.field).toBe("id");
    const byInferenceKey = await call(h.url, "GET", `/v1/reports/workspaces/${org.workspaceId}`, { key: inference.key });
    expect(byInferenceKey.status).toBe(403);
    expect(seen.length).toBe(forwarded);
  });

  it("forwards every preset route to routing with the signed identity, and refuses an inference key", async () => {
    const calls: Array<[string, string, unknown]> = [
      ["GET", "/v1/presets", undefined],
      ["POST", "/v1/presets", { slug: "fast", name: "Fast", body: { temperature: 0.2 } }],
      ["GET", "/v1/presets/fast", undefined],
      ["POST", "/v1/presets/fast/versions", { body: { temperature: 0.3 } }],
      ["POST", "/v1/presets/fast/revert", { version: 1 }],
      ["DELETE", "/v1/presets/fast", undefined],
    ];
    for (const [method, path, body] of calls) {
      const res = await call(h.url, method, path, { key: mgmt, body });
      expect(res.status).toBe(method === "POST" ? 201 : 200);
      expect(res.body).toMatchObject({ method, url: path, identity: { orgId, credential: "management", role: "owner" } });
      if (body) expect(res.body.body).toEqual(body);
    }
    const before = seen.length;
    const refused = await call(h.url, "GET", "/v1/presets", { key: inference.key });
    expect(refused.status).toBe(403);
    expect(seen.length).toBe(before);
  });

  it("answers 503 naming the service when it cannot be reached", async () => {
    const down = await startHarness("gwproxydown", { activityUrl: "http://127.0.0.1:1", routingUrl: "http://127.0.0.1:1" });
    try {
      const org = await newOrganisation(down);
      const activity = await call(down.url, "GET", "/v1/activity", { key: org.managementKey });
      expect(activity.status).toBe(503);
      expect(activity.body.error.code).toBe("router.activity_unavailable");
      const models = await call(down.url, "GET", "/v1/models");
      expect(models.status).toBe(503);
      expect(models.body.error.code).toBe("router.routing_unavailable");
      const defaults = await call(down.url, "PUT", "/v1/routing/defaults", { key: org.managementKey, body: {} });
      expect(defaults.status).toBe(503);
      expect(defaults.body.error.code).toBe("router.routing_unavailable");
      const branding = await call(down.url, "GET", "/v1/reports/branding", { key: org.managementKey });
      expect(branding.status).toBe(503);
      expect(branding.body.error.code).toBe("router.reports_unavailable");
    } finally {
      await down.close();
    }
  });

  it("sends an identity that another edge's public keys do not verify", async () => {
    const other = publicKeysOf(testSecrets());
    const forged = await startUpstream(() => other);
    const gw = await startHarness("gwproxyforged", { activityUrl: `http://127.0.0.1:${forged.port}` });
    try {
      const org = await newOrganisation(gw);
      const res = await call(gw.url, "GET", "/v1/activity", { key: org.managementKey });
      expect(res.status).toBe(401);
    } finally {
      await gw.close();
      await forged.close();
    }
  });
});
