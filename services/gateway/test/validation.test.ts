import { call, newOrganisation, startHarness, type Harness } from "./harness";

let h: Harness;
let mgmt: string;
let keyHash: string;
let credentialId: string;

beforeAll(async () => {
  h = await startHarness("gwval");
  mgmt = (await newOrganisation(h)).managementKey;
  keyHash = (await call(h.url, "POST", "/v1/keys", { key: mgmt, body: { name: "k" } })).body.data.hash;
  credentialId = (
    await call(h.url, "POST", "/v1/provider-keys", { key: mgmt, body: { provider: "openai", api_key: "sk-0123456789" } })
  ).body.data.id;
});

afterAll(async () => {
  await h.close();
});

function expectFieldError(res: { status: number; body: any }, field: string) {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe("invalid_request");
  expect(res.body.error.details.field).toBe(field);
  expect(res.body.error.message.startsWith(`${field}:`)).toBe(true);
}

describe("bad input on POST /v1/keys", () => {
  it.each<[string, Record<string, unknown>]>([
    ["name", { name: 42 }],
    ["name", { name: "" }],
    ["limit", { limit: -1 }],
    ["limit", { limit: "10" }],
    ["limit", { limit: 1e12 }],
    ["limit_reset", { limit_reset: "hourly" }],
    ["limit_mode", { limit_mode: "strict" }],
    ["limit_mode", { limit_mode: null }],
    ["include_byok_in_limit", { include_byok_in_limit: "yes" }],
    ["workspace_id", { workspace_id: 7 }],
    ["workspace_id", { workspace_id: "../etc" }],
    ["class", { class: "admin" }],
    ["expires_at", { expires_at: "2027-01-01T00:00:00Z" }],
  ])("answers 400 naming %s for %j", async (field, body) => {
    expectFieldError(await call(h.url, "POST", "/v1/keys", { key: mgmt, body }), field);
  });

  it("answers 400 naming body for a JSON array", async () => {
    expectFieldError(await call(h.url, "POST", "/v1/keys", { key: mgmt, rawBody: "[1,2]" }), "body");
  });

  it.each([
    ["malformed JSON", '{"name":'],
    ["a bare JSON string", '"hello"'],
  ])("answers 400 naming body for %s", async (_what, rawBody) => {
    const res = await call(h.url, "POST", "/v1/keys", { key: mgmt, rawBody });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
    expect(res.body.error.message).toMatch(/^body:/);
  });
});

describe("bad input on PATCH /v1/keys/{hash}", () => {
  it.each<[string, Record<string, unknown>]>([
    ["limit", { limit: -0.5 }],
    ["limit", { limit: true }],
    ["limit_reset", { limit_reset: 3 }],
    ["limit_mode", { limit_mode: "HARD" }],
    ["include_byok_in_limit", { include_byok_in_limit: 1 }],
    ["workspace_id", { workspace_id: "" }],
    ["paused", { paused: "true" }],
    ["label", { label: "x" }],
    ["disabled", { disabled: true }],
  ])("answers 400 naming %s for %j", async (field, body) => {
    expectFieldError(await call(h.url, "PATCH", `/v1/keys/${keyHash}`, { key: mgmt, body }), field);
  });

  it("answers 400 naming body when no field is given", async () => {
    expectFieldError(await call(h.url, "PATCH", `/v1/keys/${keyHash}`, { key: mgmt, body: {} }), "body");
  });

  it("answers 400 naming hash for a path that is not a key hash", async () => {
    expectFieldError(await call(h.url, "PATCH", "/v1/keys/not-a-hash", { key: mgmt, body: { paused: true } }), "hash");
    expectFieldError(await call(h.url, "DELETE", "/v1/keys/not-a-hash", { key: mgmt }), "hash");
  });
});

describe("bad input on GET /v1/keys", () => {
  it("answers 400 naming include_disabled for a value that is not a boolean", async () => {
    expectFieldError(await call(h.url, "GET", "/v1/keys?include_disabled=maybe", { key: mgmt }), "query.include_disabled");
  });
});

describe("bad input on POST /v1/provider-keys", () => {
  const valid = { provider: "openai", api_key: "sk-0123456789" };
  it.each<[string, Record<string, unknown>]>([
    ["provider", { api_key: "sk-0123456789" }],
    ["provider", { ...valid, provider: 5 }],
    ["provider", { ...valid, provider: "OpenAI" }],
    ["api_key", { provider: "openai" }],
    ["api_key", { ...valid, api_key: "" }],
    ["api_key", { ...valid, api_key: 1234 }],
    ["api_key", { ...valid, api_key: " sk-with-space " }],
    ["name", { ...valid, name: ["a"] }],
    ["tier", { ...valid, tier: "primary" }],
    ["priority", { ...valid, priority: 1.5 }],
    ["priority", { ...valid, priority: "1" }],
    ["fallback_policy", { ...valid, fallback_policy: "never" }],
    ["model_filter", { ...valid, model_filter: ["openai/gpt-4o"] }],
    ["model_filter.only", { ...valid, model_filter: { only: ["openai/gpt-4o"] } }],
    ["model_filter.allow", { ...valid, model_filter: { allow: "openai/gpt-4o" } }],
    ["model_filter.deny.0", { ...valid, model_filter: { deny: ["has space"] } }],
    ["key", { ...valid, key: "x" }],
  ])("answers 400 naming %s for %j", async (field, body) => {
    expectFieldError(await call(h.url, "POST", "/v1/provider-keys", { key: mgmt, body }), field);
  });

  it("never echoes the submitted key in an error", async () => {
    const res = await call(h.url, "POST", "/v1/provider-keys", { key: mgmt, body: { provider: "nope", api_key: "sk-do-not-echo-me" } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).not.toContain("sk-do-not-echo-me");
  });
});

describe("bad input on PATCH /v1/provider-keys/{id}", () => {
  it.each<[string, Record<string, unknown>]>([
    ["disabled", {}],
    ["disabled", { disabled: "true" }],
    ["disabled", { disabled: null }],
    ["api_key", { disabled: true, api_key: "sk-other" }],
    ["tier", { disabled: true, tier: "fallback" }],
    ["colour", { disabled: true, colour: "red" }],
  ])("answers 400 naming %s for %j", async (field, body) => {
    expectFieldError(await call(h.url, "PATCH", `/v1/provider-keys/${credentialId}`, { key: mgmt, body }), field);
  });

  it("answers 404 for an id that cannot be a credential", async () => {
    const res = await call(h.url, "PATCH", "/v1/provider-keys/../../etc", { key: mgmt, body: { disabled: true } });
    expect(res.status).toBe(404);
  });
});
