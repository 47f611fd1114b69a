import { call, newOrganisation, startHarness, type Harness } from "./harness";

let h: Harness;
let mgmt: string;
let inference: { key: string; hash: string };

beforeAll(async () => {
  h = await startHarness("gwauth");
  mgmt = (await newOrganisation(h)).managementKey;
  const res = await call(h.url, "POST", "/v1/keys", { key: mgmt, body: { name: "inference" } });
  inference = res.body.data;
});

afterAll(async () => {
  await h.close();
});

describe("bearer authentication", () => {
  it("answers 401 with the envelope naming the expected form when the header is missing", async () => {
    const res = await call(h.url, "GET", "/v1/key");
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: {
        status: 401,
        code: "unauthorized",
        message: "Authorization: missing; expected 'Bearer rt-v1-...'",
        details: { field: "Authorization" },
      },
    });
    expect(res.headers.get("www-authenticate")).toContain("Bearer");
  });

  it.each([
    ["a token that is not a router key", "Bearer sk-abc123"],
    ["a scheme other than Bearer", `Basic ${Buffer.from("a:b").toString("base64")}`],
    ["the word Bearer alone", "Bearer"],
  ])("answers 401 for %s", async (_what, header) => {
    const res = await call(h.url, "GET", "/v1/keys", { headers: { authorization: header } });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("unauthorized");
    expect(res.body.error.message).toBe("Authorization: malformed; expected 'Bearer rt-mgmt-...'");
  });

  it("answers 401 for a well-formed key that does not exist", async () => {
    const res = await call(h.url, "GET", "/v1/key", { key: `rt-v1-${"A".repeat(43)}` });
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ code: "unauthorized", message: "Authorization: unknown or revoked key" });
  });

  it.each([
    ["an inference key cut short", "/v1/key", "rt-v1-abc"],
    ["a management key cut short", "/v1/keys", `rt-mgmt-${"A".repeat(20)}`],
    ["a management key with a character too many", "/v1/keys", `rt-mgmt-${"A".repeat(44)}`],
  ])("answers 401 unknown or revoked for %s: the prefix says it is a key, not a malformed header", async (_what, path, key) => {
    const res = await call(h.url, "GET", path, { key });
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ code: "unauthorized", message: "Authorization: unknown or revoked key", details: { field: "Authorization" } });
  });

  it("answers 401 for a key past its expiry", async () => {
    const res = await call(h.url, "POST", "/v1/keys", { key: mgmt, body: { name: "short-lived" } });
    await h.consoleDb.query("UPDATE keys SET expires_at = $2 WHERE hash = $1", [res.body.data.hash, new Date("2026-11-21T10:00:05.000Z")]);
    h.clock.advance(10_000);
    const refused = await call(h.url, "GET", "/v1/key", { key: res.body.data.key });
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toBe("Authorization: this key has expired");
  });

  it("refuses a management key on an inference route with 403 permission_denied", async () => {
    const res = await call(h.url, "GET", "/v1/key", { key: mgmt });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("permission_denied");
  });

  it("guards the chat route: no key 401, a management key 403 permission_denied", async () => {
    const body = { model: "openai/gpt-4o", messages: [{ role: "user", content: "hi" }] };
    const missing = await call(h.url, "POST", "/v1/chat/completions", { body });
    expect(missing.status).toBe(401);
    expect(missing.body.error.message).toBe("Authorization: missing; expected 'Bearer rt-v1-...'");
    const management = await call(h.url, "POST", "/v1/chat/completions", { key: mgmt, body });
    expect(management.status).toBe(403);
    expect(management.body.error.code).toBe("permission_denied");
  });

  it("refuses an inference key on a management route with 403 permission_denied", async () => {
    for (const [method, path] of [
      ["GET", "/v1/keys"],
      ["POST", "/v1/keys"],
      ["GET", "/v1/provider-keys"],
      ["GET", "/v1/activity"],
    ] as const) {
      const res = await call(h.url, method, path, { key: inference.key, body: method === "POST" ? {} : undefined });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("permission_denied");
    }
  });

  it("never caches a key for longer than ten seconds on an instance that did not change it", async () => {
    const other = await h.startAnother();
    const otherUrl = `http://127.0.0.1:${other.port}`;
    expect((await call(otherUrl, "GET", "/v1/key", { key: inference.key })).status).toBe(200);
    // A change made behind the instance's back (as another instance would) shows after the TTL.
    await h.consoleDb.query("UPDATE keys SET paused = true, paused_reason = 'runaway' WHERE hash = $1", [inference.hash]);
    expect((await call(otherUrl, "GET", "/v1/key", { key: inference.key })).status).toBe(200);
    h.clock.advance(10_000);
    const refused = await call(otherUrl, "GET", "/v1/key", { key: inference.key });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: "key_paused", details: { paused_reason: "runaway" } });
  });
});
