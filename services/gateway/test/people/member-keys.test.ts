import { randomBytes } from "node:crypto";
import { Browser } from "@router/testkit";
import { s256Challenge } from "../../../console/src/pkce/pkce-request";
import { browserOf, call, newOrganisation, startHarness, type Harness } from "../harness";
import { signedInPerson } from "./people-fixtures";

/**
 * Keys that belong to a person: an inference key made from a person's session (or by a management
 * key of theirs) or approved by them through PKCE records them as its member, so the member's
 * guardrails bind it (the routing end-to-end tests follow a request through Plan). Here: who is
 * recorded, that the member's role gives or takes away no management right, and what removing the
 * member does to their keys.
 */

let h: Harness;

beforeAll(async () => {
  h = await startHarness("gw_member_keys");
});

afterAll(async () => {
  await h.close();
});

async function memberOfKey(hash: string): Promise<string | null> {
  const r = await h.consoleDb.query<{ user_id: string | null }>("SELECT user_id FROM keys WHERE hash = $1", [hash]);
  return r.rows[0]!.user_id;
}

/** An approval for a headless app by `approver`, then the app's exchange: the issued key's plaintext and hash. */
async function pkceKey(approver: Browser | string): Promise<{ key: string; hash: string }> {
  const { code, verifier } = await pkceApproval(approver);
  const issued = await call(h.url, "POST", "/v1/auth/keys", { body: { code, code_verifier: verifier } });
  expect(issued.status).toBe(200);
  return issued.body.data;
}

async function pkceApproval(approver: Browser | string): Promise<{ code: string; verifier: string }> {
  const verifier = randomBytes(48).toString("base64url");
  const body = { code_challenge: s256Challenge(verifier), code_challenge_method: "S256", key_label: "notes app" };
  const approved =
    typeof approver === "string" ? await call(h.url, "POST", "/v1/auth/pkce/approve", { key: approver, body }) : await approver.post("/v1/auth/pkce/approve", body);
  expect(approved.status).toBe(200);
  return { code: approved.body.data.code, verifier };
}

describe("the member a key records", () => {
  it("is the signed-in person who made an inference key, directly or with a management key of theirs", async () => {
    const org = await newOrganisation(h, "Member Keys Made");
    const dev = await signedInPerson(h, "Dana", { orgId: org.orgId, role: "member" });
    const fromSession = await dev.browser.post("/v1/keys", { name: "dana's app" });
    expect(fromSession.status).toBe(201);
    expect(await memberOfKey(fromSession.body.data.hash)).toBe(dev.userId);

    const opsKey = await dev.browser.post("/v1/keys", { name: "dana's ops key", class: "management" });
    expect(await memberOfKey(opsKey.body.data.hash)).toBe(dev.userId);
    const fromOpsKey = await call(h.url, "POST", "/v1/keys", { key: opsKey.body.data.key, body: { name: "made by dana's ops key" } });
    expect(fromOpsKey.status).toBe(201);
    expect(await memberOfKey(fromOpsKey.body.data.hash)).toBe(dev.userId);
  });

  it("is nobody for a key made by a management key with no person behind it, or a session exchanged from one", async () => {
    const org = await newOrganisation(h, "Member Keys Operator");
    const byKey = await call(h.url, "POST", "/v1/keys", { key: org.managementKey, body: { name: "operator's app" } });
    expect(await memberOfKey(byKey.body.data.hash)).toBeNull();
    const keySession = browserOf(h);
    expect((await keySession.post("/v1/auth/exchange", { key: org.managementKey })).status).toBe(200);
    const bySession = await keySession.post("/v1/keys", { name: "operator's session app" });
    expect(bySession.status).toBe(201);
    expect(await memberOfKey(bySession.body.data.hash)).toBeNull();
  });

  it("is the person who approved a PKCE consent, and nobody when the approving key has no person", async () => {
    const org = await newOrganisation(h, "Member Keys PKCE");
    const dev = await signedInPerson(h, "Pia", { orgId: org.orgId, role: "member" });
    expect(await memberOfKey((await pkceKey(dev.browser)).hash)).toBe(dev.userId);
    expect(await memberOfKey((await pkceKey(org.managementKey)).hash)).toBeNull();
  });
});

describe("a member's inference key and the member's role", () => {
  it("gets no management right from an owner's role", async () => {
    const org = await newOrganisation(h, "Member Keys Owner");
    const owner = await signedInPerson(h, "Oona", { orgId: org.orgId, role: "owner" });
    const made = await owner.browser.post("/v1/keys", { name: "oona's app" });
    const key = made.body.data.key as string;
    for (const [method, path, body] of [
      ["GET", "/v1/keys", undefined],
      ["POST", "/v1/keys", { name: "escalated" }],
      ["DELETE", `/v1/organization/members/${owner.userId}`, undefined],
      ["POST", "/v1/auth/pkce/approve", { code_challenge: s256Challenge("v".repeat(43)), code_challenge_method: "S256", key_label: "x" }],
    ] as const) {
      const res = await call(h.url, method, path, { key, body });
      expect([path, res.status, res.body.error.code]).toEqual([path, 403, "permission_denied"]);
    }
    // Nor a dashboard session.
    const exchanged = await browserOf(h).post("/v1/auth/exchange", { key });
    expect([exchanged.status, exchanged.body.error.details.field]).toEqual([400, "key"]);
  });

  it("keeps serving when the member's role changes to one without config:write", async () => {
    const org = await newOrganisation(h, "Member Keys Demoted");
    const owner = await signedInPerson(h, "Otis", { orgId: org.orgId, role: "owner" });
    const dev = await signedInPerson(h, "Dev", { orgId: org.orgId, role: "member" });
    const key = (await dev.browser.post("/v1/keys", { name: "dev's app" })).body.data.key as string;
    expect((await call(h.url, "GET", "/v1/key", { key })).status).toBe(200);
    const demoted = await owner.browser.request("PATCH", `/v1/organization/members/${dev.userId}`, { body: { role: "billing" } });
    expect(demoted.status).toBe(200);
    expect((await dev.browser.post("/v1/keys", { name: "no longer allowed" })).status).toBe(403);
    expect((await call(h.url, "GET", "/v1/key", { key })).status).toBe(200);
  });
});

describe("removing the member", () => {
  it("revokes their inference keys, PKCE keys included, and withdraws approvals no app has exchanged yet", async () => {
    const org = await newOrganisation(h, "Member Keys Removed");
    const owner = await signedInPerson(h, "Olive", { orgId: org.orgId, role: "owner" });
    const leaver = await signedInPerson(h, "Lee", { orgId: org.orgId, role: "member" });
    const stayer = await signedInPerson(h, "Stan", { orgId: org.orgId, role: "member" });
    const made = (await leaver.browser.post("/v1/keys", { name: "lee's app" })).body.data.key as string;
    const approved = (await pkceKey(leaver.browser)).key;
    const pending = await pkceApproval(leaver.browser);
    const stayers = (await stayer.browser.post("/v1/keys", { name: "stan's app" })).body.data.key as string;
    for (const key of [made, approved, stayers]) expect((await call(h.url, "GET", "/v1/key", { key })).status).toBe(200);

    const removed = await owner.browser.request("DELETE", `/v1/organization/members/${leaver.userId}`);
    expect(removed.body.data).toEqual({ removed: true });
    for (const key of [made, approved]) {
      const refused = await call(h.url, "GET", "/v1/key", { key });
      expect([refused.status, refused.body.error.message]).toEqual([401, "Authorization: this key has been revoked"]);
    }
    const exchange = await call(h.url, "POST", "/v1/auth/keys", { body: { code: pending.code, code_verifier: pending.verifier } });
    expect([exchange.status, exchange.body.error.details.field]).toEqual([400, "code"]);
    expect((await call(h.url, "GET", "/v1/key", { key: stayers })).status).toBe(200);
  });

  it("refuses a key of theirs that outlived the seat without being revoked (made while the removal ran)", async () => {
    const org = await newOrganisation(h, "Member Keys Race");
    const dev = await signedInPerson(h, "Rae", { orgId: org.orgId, role: "member" });
    const inference = (await dev.browser.post("/v1/keys", { name: "rae's app" })).body.data.key as string;
    const management = (await dev.browser.post("/v1/keys", { name: "rae's ops key", class: "management" })).body.data.key as string;
    // The seat alone goes, as when a key is inserted after the removal's revocation: no key was looked up yet.
    await h.consoleDb.query("DELETE FROM members WHERE org_id = $1 AND user_id = $2", [org.orgId, dev.userId]);
    for (const [key, path] of [
      [inference, "/v1/key"],
      [management, "/v1/keys"],
    ]) {
      const refused = await call(h.url, "GET", path!, { key });
      expect([refused.status, refused.body.error.message]).toEqual([401, "Authorization: this key's person no longer has a seat in its organisation"]);
    }
  });
});
