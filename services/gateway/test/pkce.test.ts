import { createHash, randomBytes } from "node:crypto";
import { s256Challenge, verifierMatches } from "../../console/src/pkce/pkce-request";
import { perMinute } from "../src/rate-limits/limits";
import { browserOf, call, newOrganisation, startHarness, type ApiResponse, type Harness } from "./harness";

// RFC 7636 appendix B.
const RFC_VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const RFC_CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

const TEN_MINUTES = 10 * 60_000;
const DAY = 24 * 3600_000;
// Not the defaults (10 USD, 30 days; config.test.ts): proves startGateway passes them through.
const LIMIT_USD = 2.5;
const DAYS = 7;

let h: Harness;

beforeAll(async () => {
  // Every request here comes from one address: the per-address PKCE limit is tested with the others.
  h = await startHarness("gw_pkce", { pkceKeyLimitUsd: LIMIT_USD, pkceKeyDays: DAYS, rateLimits: { pkce: [perMinute(100_000)] } });
});

afterAll(async () => {
  await h.close();
});

/** A verifier and its S256 challenge, computed here rather than by the code under test. */
function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(48).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

function describeRequest(query: Record<string, string>): Promise<ApiResponse> {
  return call(h.url, "GET", `/v1/auth/pkce?${new URLSearchParams(query).toString()}`);
}

function approve(key: string, body: Record<string, unknown>): Promise<ApiResponse> {
  return call(h.url, "POST", "/v1/auth/pkce/approve", { key, body });
}

function exchange(body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<ApiResponse> {
  return call(h.url, "POST", "/v1/auth/keys", { body, headers });
}

/** An approved headless request: its code and verifier. */
async function approvedCode(managementKey: string, label = "test app"): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = pkcePair();
  const res = await approve(managementKey, { code_challenge: challenge, code_challenge_method: "S256", key_label: label });
  expect(res.status).toBe(200);
  return { code: res.body.data.code, verifier };
}

function expectRefused(res: ApiResponse, field: string, message?: string | RegExp): void {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe("invalid_request");
  expect(res.body.error.details.field).toBe(field);
  expect(res.body.error.message.startsWith(`${field}: `)).toBe(true);
  if (message !== undefined) expect(res.body.error.message).toMatch(message);
}

async function codeRows(orgId: string): Promise<{ consumed_at: Date | null }[]> {
  const r = await h.consoleDb.query<{ consumed_at: Date | null }>(`SELECT consumed_at FROM pkce_codes WHERE org_id = $1`, [orgId]);
  return r.rows;
}

describe("S256", () => {
  it("matches the RFC 7636 example and nothing else", () => {
    expect(s256Challenge(RFC_VERIFIER)).toBe(RFC_CHALLENGE);
    expect(verifierMatches(RFC_VERIFIER, RFC_CHALLENGE)).toBe(true);
    expect(verifierMatches(`${RFC_VERIFIER}x`, RFC_CHALLENGE)).toBe(false);
    expect(verifierMatches(RFC_VERIFIER, RFC_CHALLENGE.slice(0, -1))).toBe(false);
    // `plain` would compare the verifier itself: never accepted.
    expect(verifierMatches(RFC_VERIFIER, RFC_VERIFIER)).toBe(false);
  });
});

describe("the redirect flow", () => {
  it("describes, approves with a management key, redirects keeping the app's query, and exchanges for a capped, expiring inference key", async () => {
    const org = await newOrganisation(h, "Redirect Co");
    const callback = "https://app.example.com/oauth/done?state=a%20b&from=router";

    const described = await describeRequest({ callback_url: callback, code_challenge: RFC_CHALLENGE, code_challenge_method: "S256" });
    expect(described.status).toBe(200);
    expect(described.body.data).toEqual({
      callback_url: callback,
      host: "app.example.com",
      headless: false,
      key_label: "app.example.com",
      code_challenge_method: "S256",
      limit: LIMIT_USD,
      expires_in_days: DAYS,
    });

    const approvedAt = h.clock.now();
    const approved = await approve(org.managementKey, {
      callback_url: callback,
      code_challenge: RFC_CHALLENGE,
      code_challenge_method: "S256",
      key_label: "Notes app",
    });
    expect(approved.status).toBe(200);
    const { code, redirect_to, expires_at } = approved.body.data;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(expires_at).toBe(new Date(approvedAt.getTime() + TEN_MINUTES).toISOString());
    // The app's query string stays as the app wrote it; the code comes after it.
    expect(redirect_to).toBe(`${callback}&code=${code}`);
    const redirect = new URL(redirect_to);
    expect(redirect.searchParams.get("state")).toBe("a b");
    expect(redirect.searchParams.getAll("code")).toEqual([code]);
    // Only the code's hash is stored.
    const stored = await h.consoleDb.query<{ code_hash: string }>(`SELECT code_hash FROM pkce_codes WHERE org_id = $1`, [org.orgId]);
    expect(stored.rows.map((r) => r.code_hash)).toEqual([createHash("sha256").update(code).digest("hex")]);

    const exchangedAt = h.clock.now();
    const issued = await exchange({ code, code_verifier: RFC_VERIFIER, code_challenge_method: "S256" });
    expect(issued.status).toBe(200);
    const expiresAt = new Date(exchangedAt.getTime() + DAYS * DAY).toISOString();
    expect(issued.body.data).toEqual({
      key: expect.stringMatching(/^rt-v1-[0-9A-Za-z]{43}$/),
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      label: "Notes app",
      limit: LIMIT_USD,
      expires_at: expiresAt,
    });
    const { key, hash } = issued.body.data;

    // An inference key with a hard lifetime ceiling that counts BYOK spend (every model is BYOK).
    const info = await call(h.url, "GET", "/v1/key", { key });
    expect(info.status).toBe(200);
    expect(info.body.data).toMatchObject({
      label: "Notes app",
      limit: LIMIT_USD,
      limit_reset: "lifetime",
      limit_mode: "hard",
      include_byok_in_limit: true,
      usage: 0,
    });
    const listed = await call(h.url, "GET", "/v1/keys", { key: org.managementKey });
    const row = listed.body.data.find((k: { hash: string }) => k.hash === hash);
    expect(row).toMatchObject({
      class: "inference",
      name: "Notes app",
      label: "Notes app",
      limit: LIMIT_USD,
      limit_reset: "lifetime",
      limit_mode: "hard",
      workspace_id: org.workspaceId,
      expires_at: expiresAt,
      disabled: false,
    });
    const asManagement = await call(h.url, "GET", "/v1/keys", { key });
    expect(asManagement.status).toBe(403);

    // Revocable like any key.
    const revoked = await call(h.url, "DELETE", `/v1/keys/${hash}`, { key: org.managementKey });
    expect(revoked.status).toBe(200);
    expect((await call(h.url, "GET", "/v1/key", { key })).status).toBe(401);
  });

  it("issues keys that stop working when their lifetime ends", async () => {
    const org = await newOrganisation(h, "Lifetime Co");
    const { code, verifier } = await approvedCode(org.managementKey);
    const issued = await exchange({ code, code_verifier: verifier });
    expect(issued.status).toBe(200);
    const { key } = issued.body.data;
    h.clock.advance(DAYS * DAY - 1000);
    expect((await call(h.url, "GET", "/v1/key", { key })).status).toBe(200);
    h.clock.advance(1000);
    const expired = await call(h.url, "GET", "/v1/key", { key });
    expect(expired.status).toBe(401);
    expect(expired.body.error.message).toMatch(/expired/);
  });

  it("accepts http callbacks on the person's own machine and takes the host, port included, as the default label", async () => {
    const { challenge } = pkcePair();
    for (const [callback, host] of [
      ["http://localhost:3000/callback", "localhost:3000"],
      ["http://127.0.0.1/cb", "127.0.0.1"],
      ["http://[::1]:8080/cb", "[::1]:8080"],
    ]) {
      const res = await describeRequest({ callback_url: callback!, code_challenge: challenge, code_challenge_method: "S256" });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ callback_url: callback, host, headless: false, key_label: host });
    }
  });

  it("puts the key in the approving key's workspace", async () => {
    const org = await newOrganisation(h, "Workspace Co");
    const ws = await call(h.url, "POST", "/v1/workspaces", { key: org.managementKey, body: { name: "Apps" } });
    expect(ws.status).toBe(201);
    const approver = await call(h.url, "POST", "/v1/keys", {
      key: org.managementKey,
      body: { name: "apps admin", class: "management", workspace_id: ws.body.data.id },
    });
    expect(approver.status).toBe(201);
    const { code, verifier } = await approvedCode(approver.body.data.key, "workspace app");
    const issued = await exchange({ code, code_verifier: verifier });
    expect(issued.status).toBe(200);
    const listed = await call(h.url, "GET", "/v1/keys", { key: org.managementKey });
    const row = listed.body.data.find((k: { hash: string }) => k.hash === issued.body.data.hash);
    expect(row.workspace_id).toBe(ws.body.data.id);
  });
});

describe("the headless flow", () => {
  it("needs a label, has no redirect and issues the key the same way", async () => {
    const org = await newOrganisation(h, "Headless Co");
    const { verifier, challenge } = pkcePair();
    const query = { code_challenge: challenge, code_challenge_method: "S256", key_label: "router-cli on laptop" };
    const described = await describeRequest(query);
    expect(described.status).toBe(200);
    expect(described.body.data).toEqual({
      callback_url: null,
      host: null,
      headless: true,
      key_label: "router-cli on laptop",
      code_challenge_method: "S256",
      limit: LIMIT_USD,
      expires_in_days: DAYS,
    });
    // The consent page may post back what describe answered: a null callback is headless too.
    const approved = await approve(org.managementKey, { ...query, callback_url: null });
    expect(approved.status).toBe(200);
    expect(approved.body.data.redirect_to).toBeNull();
    const issued = await exchange({ code: approved.body.data.code, code_verifier: verifier, code_challenge_method: "S256" });
    expect(issued.status).toBe(200);
    expect(issued.body.data.label).toBe("router-cli on laptop");
    expect((await call(h.url, "GET", "/v1/key", { key: issued.body.data.key })).status).toBe(200);
  });
});

describe("approving through a dashboard session", () => {
  it("takes the session with its CSRF header, and refuses it without", async () => {
    const org = await newOrganisation(h, "Session Co");
    const browser = browserOf(h);
    expect((await browser.post("/v1/auth/exchange", { key: org.managementKey })).status).toBe(200);
    const csrf = await browser.cookie("rt_csrf");
    expect(csrf).toBeDefined();
    const { verifier, challenge } = pkcePair();
    const body = { callback_url: "https://notes.example.org/cb", code_challenge: challenge, code_challenge_method: "S256" };

    const withoutCsrf = await browser.post("/v1/auth/pkce/approve", body, { csrf: false });
    expect(withoutCsrf.status).toBe(403);
    expect(withoutCsrf.body.error.details.field).toBe("x-csrf-token");

    const approved = await browser.post("/v1/auth/pkce/approve", body, { headers: { "x-csrf-token": csrf! }, csrf: false });
    expect(approved.status).toBe(200);
    expect(approved.body.data.redirect_to).toBe(`https://notes.example.org/cb?code=${approved.body.data.code}`);
    const issued = await exchange({ code: approved.body.data.code, code_verifier: verifier });
    expect(issued.status).toBe(200);
    expect(issued.body.data.label).toBe("notes.example.org");
    const listed = await call(h.url, "GET", "/v1/keys", { key: org.managementKey });
    const row = listed.body.data.find((k: { hash: string }) => k.hash === issued.body.data.hash);
    expect(row.workspace_id).toBe(org.workspaceId);
  });
});

describe("who may approve", () => {
  it("refuses an inference key (403) and no credential (401), and stores no code", async () => {
    const org = await newOrganisation(h, "Approver Co");
    const inference = await call(h.url, "POST", "/v1/keys", { key: org.managementKey, body: { name: "app" } });
    const { challenge } = pkcePair();
    const body = { code_challenge: challenge, code_challenge_method: "S256", key_label: "x" };
    const asInference = await approve(inference.body.data.key, body);
    expect(asInference.status).toBe(403);
    expect(asInference.body.error.code).toBe("permission_denied");
    const anonymous = await call(h.url, "POST", "/v1/auth/pkce/approve", { body });
    expect(anonymous.status).toBe(401);
    expect(await codeRows(org.orgId)).toEqual([]);
  });
});

describe("refused authorization requests, at describe and at approve alike", () => {
  const good = () => ({ callback_url: "https://app.example.com/cb", code_challenge: pkcePair().challenge, code_challenge_method: "S256" });
  const cases: [string, (q: Record<string, string>) => Record<string, string>, string, RegExp][] = [
    ["a missing method", ({ code_challenge_method: _m, ...q }) => q, "code_challenge_method", /must be S256/],
    ["method plain", (q) => ({ ...q, code_challenge_method: "plain" }), "code_challenge_method", /must be S256/],
    ["method none", (q) => ({ ...q, code_challenge_method: "none" }), "code_challenge_method", /must be S256/],
    ["method s256 in lower case", (q) => ({ ...q, code_challenge_method: "s256" }), "code_challenge_method", /must be S256/],
    ["an http callback off localhost", (q) => ({ ...q, callback_url: "http://app.example.com/cb" }), "callback_url", /must be https \(http only on localhost\)/],
    ["a custom scheme", (q) => ({ ...q, callback_url: "myapp://callback" }), "callback_url", /must be https/],
    ["a relative callback", (q) => ({ ...q, callback_url: "/cb" }), "callback_url", /absolute https URL/],
    ["an empty callback", (q) => ({ ...q, callback_url: "" }), "callback_url", /absolute https URL/],
    ["a callback with a fragment", (q) => ({ ...q, callback_url: "https://app.example.com/cb#x" }), "callback_url", /fragment/],
    ["a callback with credentials", (q) => ({ ...q, callback_url: "https://u:p@app.example.com/cb" }), "callback_url", /user name or password/],
    ["a callback that has a code already", (q) => ({ ...q, callback_url: "https://app.example.com/cb?code=1" }), "callback_url", /code parameter/],
    ["a missing challenge", ({ code_challenge: _c, ...q }) => q, "code_challenge", /required/],
    ["a 42-character challenge", (q) => ({ ...q, code_challenge: "a".repeat(42) }), "code_challenge", /43 to 128/],
    ["a 129-character challenge", (q) => ({ ...q, code_challenge: "a".repeat(129) }), "code_challenge", /43 to 128/],
    ["a challenge outside base64url", (q) => ({ ...q, code_challenge: `${"a".repeat(42)}=` }), "code_challenge", /base64url/],
    ["no label in the headless flow", ({ callback_url: _u, ...q }) => q, "key_label", /required for the headless flow/],
    ["an empty label", (q) => ({ ...q, key_label: "  " }), "key_label", /must not be empty/],
    ["a label with a control character", (q) => ({ ...q, key_label: "a\nb" }), "key_label", /control characters/],
  ];

  it.each(cases)("describe refuses %s", async (_name, change, field, message) => {
    expectRefused(await describeRequest(change(good())), field, message);
  });

  it.each(cases)("approve refuses %s and stores no code", async (_name, change, field, message) => {
    const org = await newOrganisation(h, "Refused Co");
    expectRefused(await approve(org.managementKey, change(good())), field, message);
    expect(await codeRows(org.orgId)).toEqual([]);
  });

  it("accepts challenges of 43 and 128 characters", async () => {
    for (const challenge of ["A".repeat(43), "-_".repeat(64)]) {
      const res = await describeRequest({ ...good(), code_challenge: challenge });
      expect(res.status).toBe(200);
    }
  });

  it("refuses unknown body fields at approve, and ignores unknown query parameters at describe", async () => {
    const org = await newOrganisation(h, "Fields Co");
    expectRefused(await approve(org.managementKey, { ...good(), state: "xyz" }), "state", /unknown field/);
    expect((await describeRequest({ ...good(), state: "xyz" })).status).toBe(200);
  });
});

describe("the exchange", () => {
  it("refuses plain and none, before the code is looked up; an omitted method means S256", async () => {
    const org = await newOrganisation(h, "Method Co");
    const { code, verifier } = await approvedCode(org.managementKey);
    for (const method of ["plain", "none", "s256"]) {
      expectRefused(await exchange({ code, code_verifier: verifier, code_challenge_method: method }), "code_challenge_method", /must be S256/);
    }
    // Malformed requests never reach the code: it still works.
    expect((await exchange({ code, code_verifier: verifier })).status).toBe(200);
  });

  it("refuses a missing or malformed verifier and a missing code, naming the field", async () => {
    const org = await newOrganisation(h, "Verifier Co");
    const { code, verifier } = await approvedCode(org.managementKey);
    expectRefused(await exchange({ code }), "code_verifier", /required/);
    expectRefused(await exchange({ code, code_verifier: "a".repeat(42) }), "code_verifier", /43 to 128/);
    expectRefused(await exchange({ code, code_verifier: "a".repeat(129) }), "code_verifier", /43 to 128/);
    expectRefused(await exchange({ code, code_verifier: `${"a".repeat(42)}+` }), "code_verifier", /RFC 7636/);
    expectRefused(await exchange({ code_verifier: verifier }), "code", /required/);
    expectRefused(await exchange({ code, code_verifier: verifier, client_id: "x" }), "client_id", /unknown field/);
    expect((await exchange({ code, code_verifier: verifier })).status).toBe(200);
  });

  it("refuses an unknown code", async () => {
    expectRefused(await exchange({ code: "c".repeat(43), code_verifier: RFC_VERIFIER }), "code", /unknown, already used or expired/);
  });

  it("answers a reused code with 400 naming code", async () => {
    const org = await newOrganisation(h, "Reuse Co");
    const { code, verifier } = await approvedCode(org.managementKey);
    expect((await exchange({ code, code_verifier: verifier })).status).toBe(200);
    expectRefused(await exchange({ code, code_verifier: verifier }), "code", /unknown, already used or expired/);
  });

  it("spends the code on a verifier that does not match: the right one then fails too", async () => {
    const org = await newOrganisation(h, "Wrong Verifier Co");
    const { code, verifier } = await approvedCode(org.managementKey);
    const wrong = await exchange({ code, code_verifier: pkcePair().verifier });
    expectRefused(wrong, "code_verifier", /does not match/);
    const rows = await codeRows(org.orgId);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.consumed_at).toEqual(h.clock.now());
    expectRefused(await exchange({ code, code_verifier: verifier }), "code", /unknown, already used or expired/);
    const keys = await call(h.url, "GET", "/v1/keys", { key: org.managementKey });
    expect(keys.body.data.filter((k: { class: string }) => k.class === "inference")).toEqual([]);
  });

  it("refuses a code ten minutes after approval, and takes it just before", async () => {
    const org = await newOrganisation(h, "Expiry Co");
    const late = await approvedCode(org.managementKey);
    const inTime = await approvedCode(org.managementKey);
    h.clock.advance(TEN_MINUTES - 1);
    expect((await exchange({ code: inTime.code, code_verifier: inTime.verifier })).status).toBe(200);
    h.clock.advance(1);
    expectRefused(await exchange({ code: late.code, code_verifier: late.verifier }), "code", /unknown, already used or expired/);
  });

  it("gives two simultaneous exchanges of one code exactly one key", async () => {
    const org = await newOrganisation(h, "Race Co");
    const { code, verifier } = await approvedCode(org.managementKey);
    const answers = await Promise.all([1, 2, 3, 4].map(() => exchange({ code, code_verifier: verifier })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400, 400]);
  });
});

describe("CORS", () => {
  const origin = { origin: "https://app.example.com" };

  it("lets any origin call the exchange, on success and on refusal, never with credentials", async () => {
    const org = await newOrganisation(h, "Cors Co");
    const { code, verifier } = await approvedCode(org.managementKey);
    for (const res of [
      await exchange({ code, code_verifier: verifier }, origin),
      await exchange({ code, code_verifier: verifier }, origin),
      await exchange({ code_verifier: verifier }, origin),
    ]) {
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    }
  });

  it("answers the exchange's preflight: POST and content-type from any origin, no credentials", async () => {
    const res = await call(h.url, "OPTIONS", "/v1/auth/keys", {
      headers: { ...origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-methods")).toBe("POST");
    expect(res.headers.get("access-control-allow-headers")).toBe("content-type");
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it("gives no other route CORS headers", async () => {
    const org = await newOrganisation(h, "No Cors Co");
    const { challenge } = pkcePair();
    const query = { code_challenge: challenge, code_challenge_method: "S256", key_label: "x" };
    const answers = [
      await call(h.url, "GET", `/v1/auth/pkce?${new URLSearchParams(query).toString()}`, { headers: origin }),
      await call(h.url, "POST", "/v1/auth/pkce/approve", { key: org.managementKey, body: query, headers: origin }),
      await call(h.url, "OPTIONS", "/v1/auth/pkce/approve", { headers: { ...origin, "access-control-request-method": "POST" } }),
      await call(h.url, "GET", "/v1/keys", { key: org.managementKey, headers: origin }),
      await call(h.url, "OPTIONS", "/v1/keys", { headers: { ...origin, "access-control-request-method": "POST" } }),
      await call(h.url, "POST", "/v1/auth/exchange", { body: { key: org.managementKey }, headers: origin }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    for (const res of answers) {
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    }
  });
});
