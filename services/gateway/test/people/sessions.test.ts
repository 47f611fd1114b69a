import { request as httpRequest } from "node:http";
import { Browser, TEST_REDIS_URL, waitFor } from "@router/testkit";
import { mintKey } from "@router/api-keys";
import { browserOf, call, newOrganisation, startHarness, type Harness } from "../harness";
import { signedInPerson } from "./people-fixtures";

let h: Harness;

beforeAll(async () => {
  h = await startHarness("gw_sessions", { redisUrl: TEST_REDIS_URL });
});

afterAll(async () => {
  await h.close();
});

async function exchanged(managementKey: string, url = h.url): Promise<Browser> {
  const browser = browserOf(h, url);
  const res = await browser.post("/v1/auth/exchange", { key: managementKey });
  expect(res.status).toBe(200);
  return browser;
}

/** Set-Cookie headers of an exchange sent with a given Host header (fetch cannot set Host). */
function exchangeWithHost(host: string, key: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ key });
    const req = httpRequest(
      `${h.url}/v1/auth/exchange`,
      { method: "POST", headers: { host, "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        resolve(res.headers["set-cookie"] ?? []);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("exchanging a management key for a dashboard session", () => {
  it("sets an httpOnly rt_session and a script-readable rt_csrf, Lax, and answers the Session", async () => {
    const org = await newOrganisation(h, "Exchange Co");
    const browser = browserOf(h);
    const res = await browser.post("/v1/auth/exchange", { key: org.managementKey });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      expires_at: expect.stringMatching(/Z$/),
      org_id: org.orgId,
      key_name: "initial management key",
      user: null,
      auth_method: "management_key",
    });
    const setCookies = res.headers.getSetCookie();
    const session = setCookies.find((c) => c.startsWith("rt_session="))!;
    const csrf = setCookies.find((c) => c.startsWith("rt_csrf="))!;
    expect(session).toMatch(/HttpOnly/i);
    expect(session).toMatch(/SameSite=Lax/i);
    expect(csrf).not.toMatch(/HttpOnly/i);
    expect(csrf).toMatch(/SameSite=Lax/i);
    // Loopback over http: a browser would drop a Secure cookie here.
    expect(session).not.toMatch(/Secure/i);
    const me = await browser.get("/v1/auth/session");
    expect(me.status).toBe(200);
    expect(me.body.data.org_id).toBe(org.orgId);
  });

  it("marks both cookies Secure when the request is addressed to a public host", async () => {
    const org = await newOrganisation(h, "Secure Co");
    const cookies = await exchangeWithHost("router.example.com", org.managementKey);
    expect(cookies).toHaveLength(2);
    for (const c of cookies) expect(c).toMatch(/; Secure/i);
  });

  it("refuses an inference key, an unknown key and a malformed body, naming the field", async () => {
    const org = await newOrganisation(h, "Refusals Co");
    const inference = await call(h.url, "POST", "/v1/keys", { key: org.managementKey, body: { name: "app" } });
    const browser = browserOf(h);
    const asInference = await browser.post("/v1/auth/exchange", { key: inference.body.data.key });
    expect(asInference.status).toBe(400);
    expect(asInference.body.error.details.field).toBe("key");
    expect(asInference.body.error.message).toContain("this is an inference key");
    const unknown = await browser.post("/v1/auth/exchange", { key: mintKey("management", "another pepper").plaintext });
    expect(unknown.status).toBe(401);
    expect(unknown.body.error.message).toBe("key: unknown, revoked or expired management key");
    // The right prefix, a wrong value (cut short, mistyped): unknown, not "expected a management key".
    const cutShort = await browser.post("/v1/auth/exchange", { key: "rt-mgmt-notakey" });
    expect(cutShort.status).toBe(401);
    expect(cutShort.body.error).toMatchObject({ message: "key: unknown, revoked or expired management key", details: { field: "key" } });
    const malformed = await browser.post("/v1/auth/exchange", { key: "sk-not-a-router-key" });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.message).toBe("key: expected a management key (rt-mgmt-...)");
    const missing = await browser.post("/v1/auth/exchange", {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.field).toBe("key");
    expect(await browser.cookie("rt_session")).toBeUndefined();
  });
});

describe("the CSRF rule", () => {
  it("lets a session read with GET and write only with x-csrf-token equal to rt_csrf", async () => {
    const org = await newOrganisation(h, "Csrf Co");
    const browser = await exchanged(org.managementKey);
    expect((await browser.get("/v1/keys")).status).toBe(200);
    const without = await browser.post("/v1/keys", { name: "no csrf" }, { csrf: false });
    expect(without.status).toBe(403);
    expect(without.body.error.details.field).toBe("x-csrf-token");
    const wrong = await browser.post("/v1/keys", { name: "wrong csrf" }, { csrf: false, headers: { "x-csrf-token": "forged" } });
    expect(wrong.status).toBe(403);
    const right = await browser.post("/v1/keys", { name: "with csrf" });
    expect(right.status).toBe(201);
  });

  it("refuses another session's CSRF token even when the rt_csrf cookie is planted to match", async () => {
    const org = await newOrganisation(h, "Planted Co");
    const victim = await exchanged(org.managementKey);
    const attacker = await exchanged(org.managementKey);
    const attackerCsrf = (await attacker.cookie("rt_csrf"))!;
    await victim.jar.setCookie(`rt_csrf=${attackerCsrf}; Path=/`, h.url);
    const res = await victim.post("/v1/keys", { name: "cross" });
    expect(res.status).toBe(403);
  });

  it("never asks a bearer key for a CSRF token", async () => {
    const org = await newOrganisation(h, "Bearer Co");
    const res = await call(h.url, "POST", "/v1/keys", { key: org.managementKey, body: { name: "bearer" } });
    expect(res.status).toBe(201);
  });
});

describe("signing out", () => {
  it("always succeeds, clears both cookies and ends the session on every replica at once", async () => {
    const org = await newOrganisation(h, "Signout Co");
    const other = await h.startAnother();
    const otherUrl = `http://127.0.0.1:${other.port}`;
    const browser = await exchanged(org.managementKey);
    const token = (await browser.cookie("rt_session"))!;
    const csrf = (await browser.cookie("rt_csrf"))!;
    // The other replica has the session cached.
    const replay = browserOf(h, otherUrl);
    await replay.jar.setCookie(`rt_session=${token}; Path=/`, otherUrl);
    await replay.jar.setCookie(`rt_csrf=${csrf}; Path=/`, otherUrl);
    expect((await replay.get("/v1/keys")).status).toBe(200);

    const out = await browser.post("/v1/auth/signout");
    expect(out.status).toBe(200);
    expect(out.body.data).toEqual({ ended: true });
    expect(await browser.cookie("rt_session")).toBeUndefined();
    expect(await browser.cookie("rt_csrf")).toBeUndefined();
    // No clock advance: the other replica learnt of the sign-out through Redis, not by expiry.
    await waitFor(async () => (await replay.get("/v1/keys")).status === 401, { timeoutMs: 5_000 });
    const again = await browserOf(h).post("/v1/auth/signout");
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual({ ended: false });
  });

  it("ends a session when the key it was exchanged for is revoked", async () => {
    const org = await newOrganisation(h, "Revoke Co");
    const second = await call(h.url, "POST", "/v1/keys", { key: org.managementKey, body: { name: "ops", class: "management" } });
    const browser = await exchanged(second.body.data.key);
    expect((await browser.get("/v1/keys")).status).toBe(200);
    expect((await call(h.url, "DELETE", `/v1/keys/${second.body.data.hash}`, { key: org.managementKey })).status).toBe(200);
    const after = await browser.get("/v1/keys");
    expect(after.status).toBe(401);
  });
});

describe("organisations I belong to, and switching", () => {
  it("lists a person's seats with their roles and moves the session into another organisation", async () => {
    const acme = await newOrganisation(h, "Switch Acme");
    const person = await signedInPerson(h, "Sam", { orgId: acme.orgId, role: "billing" });
    const list = await person.browser.get("/v1/auth/organizations");
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual(
      expect.arrayContaining([
        { id: acme.orgId, name: "Switch Acme", role: "billing", role_name: "Finance", current: true },
        { id: person.ownOrgId, name: "Sam's organisation", role: "owner", role_name: "Owner", current: false },
      ]),
    );
    const before = (await person.browser.cookie("rt_session"))!;
    const moved = await person.browser.post("/v1/auth/switch", { org_id: person.ownOrgId });
    expect(moved.status).toBe(200);
    expect(moved.body.data).toEqual({ org_id: person.ownOrgId });
    expect(await person.browser.cookie("rt_session")).not.toBe(before);
    expect((await person.browser.get("/v1/auth/session")).body.data.org_id).toBe(person.ownOrgId);
    // The old session ended with the move.
    const stale = browserOf(h);
    await stale.jar.setCookie(`rt_session=${before}; Path=/`, h.url);
    expect((await stale.get("/v1/auth/session")).status).toBe(401);
  });

  it("answers 404 for an organisation the person has no seat in, and 400 for a malformed id", async () => {
    const stranger = await newOrganisation(h, "Stranger Co");
    const person = await signedInPerson(h, "Nell");
    const res = await person.browser.post("/v1/auth/switch", { org_id: stranger.orgId });
    expect(res.status).toBe(404);
    const bad = await person.browser.post("/v1/auth/switch", { org_id: "nope" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe("org_id");
  });

  it("gives a key with no person behind it its own organisation only", async () => {
    const org = await newOrganisation(h, "Keyonly Co");
    const res = await call(h.url, "GET", "/v1/auth/organizations", { key: org.managementKey });
    expect(res.body.data).toEqual([{ id: org.orgId, name: "Keyonly Co", role: "owner", role_name: "Owner", current: true }]);
    const other = await newOrganisation(h, "Elsewhere Co");
    const sw = await call(h.url, "POST", "/v1/auth/switch", { key: org.managementKey, body: { org_id: other.orgId } });
    expect(sw.status).toBe(404);
  });

  it("answers GET /v1/auth/session only to a session", async () => {
    const org = await newOrganisation(h, "Sessiononly Co");
    const res = await call(h.url, "GET", "/v1/auth/session", { key: org.managementKey });
    expect(res.status).toBe(403);
    const anonymous = await browserOf(h).get("/v1/auth/session");
    expect(anonymous.status).toBe(401);
  });
});
