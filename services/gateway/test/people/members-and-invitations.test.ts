import { browserOf, call, newOrganisation, startHarness, type Harness } from "../harness";
import { signedInPerson } from "./people-fixtures";

let h: Harness;

beforeAll(async () => {
  h = await startHarness("gw_members");
});

afterAll(async () => {
  await h.close();
});

function tokenOf(url: string): string {
  const match = /\/invite#token=([A-Za-z0-9_-]+)$/.exec(url);
  if (!match?.[1]) throw new Error(`not an invitation link: ${url}`);
  return match[1];
}

describe("members", () => {
  it("lists owners first with the caller's own role and who is who", async () => {
    const org = await newOrganisation(h, "Members List");
    const dev = await signedInPerson(h, "Dora", { orgId: org.orgId, role: "member" });
    const owner = await signedInPerson(h, "Otto", { orgId: org.orgId, role: "owner" });
    const res = await dev.browser.get("/v1/organization/members");
    expect(res.status).toBe(200);
    expect(res.body.your_role).toBe("member");
    expect(res.body.data.map((m: { user_id: string }) => m.user_id)).toEqual([owner.userId, dev.userId]);
    expect(res.body.data[1]).toEqual({
      user_id: dev.userId,
      role: "member",
      role_name: "Developer",
      joined_at: expect.any(String),
      name: "Dora",
      email: "dora@example.com",
      avatar_url: null,
      provider: "oidc",
      is_you: true,
    });
    expect(res.body.data[0].is_you).toBe(false);
  });

  it("lets only owners change roles; the change reaches the person's live session", async () => {
    const org = await newOrganisation(h, "Members Roles");
    const owner = await signedInPerson(h, "Olga", { orgId: org.orgId, role: "owner" });
    const dev = await signedInPerson(h, "Dan", { orgId: org.orgId, role: "member" });
    const byDev = await dev.browser.request("PATCH", `/v1/organization/members/${owner.userId}`, { body: { role: "billing" } });
    expect(byDev.status).toBe(403);
    expect((await dev.browser.post("/v1/workspaces", { name: "dev made" })).status).toBe(201);
    const changed = await owner.browser.request("PATCH", `/v1/organization/members/${dev.userId}`, { body: { role: "billing" } });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toEqual({ user_id: dev.userId, role: "billing" });
    // Same instance: its session cache dropped the old role at once.
    expect((await dev.browser.post("/v1/workspaces", { name: "now finance" })).status).toBe(403);
    const bad = await owner.browser.request("PATCH", `/v1/organization/members/${dev.userId}`, { body: { role: "admin" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe("role");
  });

  it("never demotes or removes the last owner (409), and removes others with their keys and sessions", async () => {
    const org = await newOrganisation(h, "Members Last");
    const owner = await signedInPerson(h, "Orla", { orgId: org.orgId, role: "owner" });
    const demote = await owner.browser.request("PATCH", `/v1/organization/members/${owner.userId}`, { body: { role: "member" } });
    expect(demote.status).toBe(409);
    const remove = await owner.browser.request("DELETE", `/v1/organization/members/${owner.userId}`);
    expect(remove.status).toBe(409);

    const dev = await signedInPerson(h, "Dirk", { orgId: org.orgId, role: "member" });
    const devKey = await dev.browser.post("/v1/keys", { name: "dirk's ops key", class: "management" });
    expect(devKey.status).toBe(201);
    // A key a person made acts with that person's role, never more.
    const escalate = await call(h.url, "PATCH", `/v1/organization/members/${owner.userId}`, {
      key: devKey.body.data.key,
      body: { role: "member" },
    });
    expect(escalate.status).toBe(403);
    const removed = await owner.browser.request("DELETE", `/v1/organization/members/${dev.userId}`);
    expect(removed.body.data).toEqual({ removed: true });
    expect((await dev.browser.get("/v1/keys")).status).toBe(401);
    expect((await call(h.url, "GET", "/v1/keys", { key: devKey.body.data.key })).status).toBe(401);
    const again = await owner.browser.request("DELETE", `/v1/organization/members/${dev.userId}`);
    expect(again.body.data).toEqual({ removed: false });
  });

  it("a management key with no person behind it has the owner's powers", async () => {
    const org = await newOrganisation(h, "Members Key");
    const person = await signedInPerson(h, "Kim", { orgId: org.orgId, role: "owner" });
    const res = await call(h.url, "PATCH", `/v1/organization/members/${person.userId}`, { key: org.managementKey, body: { role: "owner" } });
    expect(res.status).toBe(200);
    expect((await call(h.url, "GET", "/v1/organization/members", { key: org.managementKey })).body.your_role).toBe("owner");
  });
});

describe("invitations", () => {
  it("invites, lists without links, looks up by token, and accepting takes the seat and moves the session", async () => {
    const org = await newOrganisation(h, "Invite Co");
    const created = await call(h.url, "POST", "/v1/organization/invitations", { key: org.managementKey, body: { role: "billing" } });
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({
      id: expect.stringMatching(/^inv_/),
      role: "billing",
      created_at: "2026-11-21T10:00:00.000Z",
      expires_at: "2026-11-28T10:00:00.000Z",
      created_by_name: "initial management key",
      url: expect.stringMatching(new RegExp(`^${h.url}/invite#token=`)),
    });
    const token = tokenOf(created.body.data.url);
    const listed = await call(h.url, "GET", "/v1/organization/invitations", { key: org.managementKey });
    expect(listed.body.data).toEqual([{ ...created.body.data, url: undefined }].map(({ url: _u, ...rest }) => rest));
    expect(JSON.stringify(listed.body)).not.toContain(token);

    const lookup = await browserOf(h).post("/v1/invitations/lookup", { token });
    expect(lookup.status).toBe(200);
    expect(lookup.body.data).toEqual({ org_name: "Invite Co", role: "billing", role_name: "Finance", expires_at: "2026-11-28T10:00:00.000Z" });

    const person = await signedInPerson(h, "Ines");
    const before = await person.browser.cookie("rt_session");
    const accepted = await person.browser.post("/v1/invitations/accept", { token });
    expect(accepted.status).toBe(200);
    expect(accepted.body.data).toEqual({ org_id: org.orgId });
    expect(await person.browser.cookie("rt_session")).not.toBe(before);
    const session = await person.browser.get("/v1/auth/session");
    expect(session.body.data).toMatchObject({ org_id: org.orgId, auth_method: "invitation", user: { id: person.userId, name: "Ines" } });
    const members = await person.browser.get("/v1/organization/members");
    expect(members.body.your_role).toBe("billing");

    // Single use: a used token is the same 404 as an unknown one.
    expect((await browserOf(h).post("/v1/invitations/lookup", { token })).status).toBe(404);
    const other = await signedInPerson(h, "Olly");
    expect((await other.browser.post("/v1/invitations/accept", { token })).status).toBe(404);
    expect((await call(h.url, "GET", "/v1/organization/invitations", { key: org.managementKey })).body.data).toEqual([]);
  });

  it("refuses an API key and a session with no person at accept (403), and expires after seven days", async () => {
    const org = await newOrganisation(h, "Invite Refusals");
    const created = await call(h.url, "POST", "/v1/organization/invitations", { key: org.managementKey, body: { role: "member" } });
    const token = tokenOf(created.body.data.url);
    const byKey = await call(h.url, "POST", "/v1/invitations/accept", { key: org.managementKey, body: { token } });
    expect(byKey.status).toBe(403);
    const keySession = browserOf(h);
    await keySession.post("/v1/auth/exchange", { key: org.managementKey });
    expect((await keySession.post("/v1/invitations/accept", { token })).status).toBe(403);
    h.clock.advance(7 * 24 * 3600_000);
    try {
      expect((await browserOf(h).post("/v1/invitations/lookup", { token })).status).toBe(404);
      const person = await signedInPerson(h, "Late");
      expect((await person.browser.post("/v1/invitations/accept", { token })).status).toBe(404);
    } finally {
      h.clock.advance(-7 * 24 * 3600_000);
    }
  });

  it("revokes, caps open invitations at 50, and is for owners only", async () => {
    const org = await newOrganisation(h, "Invite Admin");
    const created = await call(h.url, "POST", "/v1/organization/invitations", { key: org.managementKey, body: { role: "owner" } });
    const id = created.body.data.id as string;
    expect((await call(h.url, "DELETE", `/v1/organization/invitations/${id}`, { key: org.managementKey })).body.data).toEqual({ revoked: true });
    expect((await call(h.url, "DELETE", `/v1/organization/invitations/${id}`, { key: org.managementKey })).body.data).toEqual({ revoked: false });
    expect((await browserOf(h).post("/v1/invitations/lookup", { token: tokenOf(created.body.data.url) })).status).toBe(404);
    const stranger = await newOrganisation(h, "Invite Stranger");
    expect((await call(h.url, "DELETE", `/v1/organization/invitations/${id}`, { key: stranger.managementKey })).status).toBe(404);

    for (let i = 0; i < 50; i++) {
      expect((await call(h.url, "POST", "/v1/organization/invitations", { key: org.managementKey, body: { role: "member" } })).status).toBe(201);
    }
    expect((await call(h.url, "POST", "/v1/organization/invitations", { key: org.managementKey, body: { role: "member" } })).status).toBe(409);

    const dev = await signedInPerson(h, "Dev", { orgId: org.orgId, role: "member" });
    expect((await dev.browser.get("/v1/organization/invitations")).status).toBe(403);
    expect((await dev.browser.post("/v1/organization/invitations", { role: "member" })).status).toBe(403);
    const bad = await call(h.url, "POST", "/v1/organization/invitations", { key: stranger.managementKey, body: { role: "readonly" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe("role");
  });
});
