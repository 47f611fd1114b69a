import { ManualClock } from "@router/money";
import { startBroadcastHarness, type BroadcastHarness } from "./broadcast-harness";

let h: BroadcastHarness;
const PATH = "/v1/broadcast/destinations";
const HOOK = "https://hooks.example.com/router";
const TRACES = "https://otlp.example.com/v1/traces";

beforeAll(async () => {
  h = await startBroadcastHarness("bcroutes", new ManualClock(new Date("2026-11-21T10:00:00.000Z")));
});

afterAll(async () => {
  await h.close();
});

describe("adding and listing destinations", () => {
  it("adds a webhook, shows its signing secret once, and never again", async () => {
    const created = await h.call("POST", PATH, "org_list", { kind: "webhook", url: HOOK, name: "Audit" });

    expect(created.status).toBe(201);
    expect(created.json.data).toEqual({
      id: expect.stringMatching(/^dst_[0-9a-f]{32}$/),
      kind: "webhook",
      url: HOOK,
      name: "Audit",
      sample_rate: 1,
      disabled: false,
      header_name: null,
      header_hint: null,
      last_attempt_at: null,
      last_success_at: null,
      last_http_status: null,
      last_error: null,
      created_at: "2026-11-21T10:00:00.000Z",
      signing_secret: expect.stringMatching(/^whsec_/),
    });
    const listed = await h.call("GET", PATH, "org_list");
    expect(listed.status).toBe(200);
    expect(listed.json.next_cursor).toBeNull();
    expect(listed.json.data).toEqual([{ ...created.json.data, signing_secret: undefined }]);
    expect(JSON.stringify(listed.json)).not.toContain(created.json.data.signing_secret);
  });

  it("adds an otlp destination with one header, sealed at rest and shown by its last four characters", async () => {
    const created = await h.call("POST", PATH, "org_otlp", {
      kind: "otlp",
      url: TRACES,
      header_name: "x-honeycomb-team",
      header_value: "hcaik_secret_value_9f3e",
      sample_rate: 0.25,
    });

    expect(created.status).toBe(201);
    expect(created.json.data).toMatchObject({ kind: "otlp", header_name: "x-honeycomb-team", header_hint: "9f3e", sample_rate: 0.25, name: null });
    expect(created.json.data.signing_secret).toBeUndefined();
    expect(JSON.stringify(created.json)).not.toContain("hcaik_secret");
    const { rows } = await h.db.query<{ row: string }>("SELECT row_to_json(d)::text AS row FROM destinations d WHERE id = $1", [created.json.data.id]);
    expect(rows[0]?.row).toContain("9f3e");
    expect(rows[0]?.row).not.toContain("hcaik_secret");
  });

  it("refuses an eleventh destination with 409 and keeps ten", async () => {
    for (let i = 0; i < 10; i++) {
      expect((await h.call("POST", PATH, "org_full", { kind: "webhook", url: HOOK })).status).toBe(201);
    }
    const refused = await h.call("POST", PATH, "org_full", { kind: "otlp", url: TRACES });
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({ code: "conflict", details: { limit: 10 } });
    expect((await h.call("GET", PATH, "org_full")).json.data).toHaveLength(10);
    // Another organisation's count is its own.
    expect((await h.call("POST", PATH, "org_other", { kind: "webhook", url: HOOK })).status).toBe(201);
  });

  it("keeps to ten when many adds race", async () => {
    const results = await Promise.all(Array.from({ length: 14 }, () => h.call("POST", PATH, "org_race", { kind: "webhook", url: HOOK })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(10);
    expect(results.filter((r) => r.status === 409)).toHaveLength(4);
  });
});

describe("bad input is a 400 naming the field, and nothing is stored", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ["no kind", { url: HOOK }, "kind"],
    ["an unknown kind", { kind: "email", url: HOOK }, "kind"],
    ["no url", { kind: "webhook" }, "url"],
    ["plain http", { kind: "webhook", url: "http://hooks.example.com/x" }, "url"],
    ["localhost", { kind: "webhook", url: "https://localhost/x" }, "url"],
    ["a private address", { kind: "otlp", url: "https://10.0.0.8/v1/traces" }, "url"],
    ["the metadata address", { kind: "webhook", url: "https://169.254.169.254/latest" }, "url"],
    ["another port", { kind: "webhook", url: "https://hooks.example.com:8443/x" }, "url"],
    ["not a URL", { kind: "webhook", url: "hooks" }, "url"],
    ["a sample rate above 1", { kind: "webhook", url: HOOK, sample_rate: 1.5 }, "sample_rate"],
    ["a sample rate as text", { kind: "webhook", url: HOOK, sample_rate: "0.5" }, "sample_rate"],
    ["an empty name", { kind: "webhook", url: HOOK, name: "  " }, "name"],
    ["a header on a webhook", { kind: "webhook", url: HOOK, header_name: "x-key", header_value: "secret-value" }, "header_name"],
    ["a header name without a value", { kind: "otlp", url: TRACES, header_name: "x-key" }, "header_value"],
    ["a header value without a name", { kind: "otlp", url: TRACES, header_value: "secret-value" }, "header_name"],
    ["a header name with a space", { kind: "otlp", url: TRACES, header_name: "x key", header_value: "v" }, "header_name"],
    ["a reserved header", { kind: "otlp", url: TRACES, header_name: "Content-Type", header_value: "text/plain" }, "header_name"],
    ["a header value with a line break", { kind: "otlp", url: TRACES, header_name: "x-key", header_value: "a\r\nx-evil: 1" }, "header_value"],
    ["an unknown field", { kind: "webhook", url: HOOK, secret: "mine" }, "secret"],
  ];

  it.each(cases)("%s", async (_what, body, field) => {
    const res = await h.call("POST", PATH, "org_bad", body);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ status: 400, code: "invalid_request", details: { field } });
  });

  it("a body that is not an object", async () => {
    const res = await h.call("POST", PATH, "org_bad", [1, 2]);
    expect(res.status).toBe(400);
    expect((await h.call("GET", PATH, "org_bad")).json.data).toEqual([]);
  });
});

describe("pausing, resuming, renaming, resampling and removing", () => {
  it("changes only what the body names", async () => {
    const { id } = (await h.call("POST", PATH, "org_patch", { kind: "webhook", url: HOOK, name: "first" })).json.data as { id: string };

    const paused = await h.call("PATCH", `${PATH}/${id}`, "org_patch", { disabled: true });
    expect(paused.status).toBe(200);
    expect(paused.json.data).toMatchObject({ id, disabled: true, name: "first", sample_rate: 1 });
    const resampled = await h.call("PATCH", `${PATH}/${id}`, "org_patch", { sample_rate: 0.1, name: "second" });
    expect(resampled.json.data).toMatchObject({ disabled: true, name: "second", sample_rate: 0.1 });
    const unnamed = await h.call("PATCH", `${PATH}/${id}`, "org_patch", { name: null, disabled: false });
    expect(unnamed.json.data).toMatchObject({ disabled: false, name: null, sample_rate: 0.1 });
  });

  it("refuses a change of anything else, or of nothing", async () => {
    const { id } = (await h.call("POST", PATH, "org_patch2", { kind: "webhook", url: HOOK })).json.data as { id: string };
    const url = await h.call("PATCH", `${PATH}/${id}`, "org_patch2", { url: "https://evil.example.com/" });
    expect(url.status).toBe(400);
    expect(url.json.error.details.field).toBe("url");
    const nothing = await h.call("PATCH", `${PATH}/${id}`, "org_patch2", {});
    expect(nothing.status).toBe(400);
    const rate = await h.call("PATCH", `${PATH}/${id}`, "org_patch2", { sample_rate: -0.1 });
    expect(rate.json.error.details.field).toBe("sample_rate");
  });

  it("removes a destination once", async () => {
    const { id } = (await h.call("POST", PATH, "org_del", { kind: "otlp", url: TRACES })).json.data as { id: string };
    const removed = await h.call("DELETE", `${PATH}/${id}`, "org_del");
    expect(removed.status).toBe(200);
    expect(removed.json.data).toEqual({ id, deleted: true });
    expect((await h.call("DELETE", `${PATH}/${id}`, "org_del")).status).toBe(404);
    expect((await h.call("GET", PATH, "org_del")).json.data).toEqual([]);
  });

  it("answers 404 for another organisation's destination and changes nothing of it", async () => {
    const { id } = (await h.call("POST", PATH, "org_owner", { kind: "webhook", url: HOOK, name: "mine" })).json.data as { id: string };
    expect((await h.call("PATCH", `${PATH}/${id}`, "org_intruder", { disabled: true })).status).toBe(404);
    expect((await h.call("DELETE", `${PATH}/${id}`, "org_intruder")).status).toBe(404);
    expect((await h.call("POST", `${PATH}/${id}/test`, "org_intruder")).status).toBe(404);
    expect((await h.call("GET", PATH, "org_intruder")).json.data).toEqual([]);
    expect((await h.call("GET", PATH, "org_owner")).json.data).toMatchObject([{ id, disabled: false, name: "mine" }]);
    expect(h.receiver.requests).toHaveLength(0);
  });

  it("answers 400 naming id for a malformed id", async () => {
    const res = await h.call("PATCH", `${PATH}/not-an-id`, "org_patch", { disabled: true });
    expect(res.status).toBe(400);
    expect(res.json.error.details.field).toBe("id");
  });
});

describe("roles", () => {
  it("lets every role list, and only owner, admin and developer change", async () => {
    const { id } = (await h.call("POST", PATH, "org_roles", { kind: "webhook", url: HOOK })).json.data as { id: string };
    for (const role of ["owner", "admin", "member", "billing", "readonly"] as const) {
      expect((await h.call("GET", PATH, "org_roles", undefined, { role, credential: "session" })).status).toBe(200);
    }
    for (const role of ["billing", "readonly"] as const) {
      const as = { role, credential: "session" as const };
      const add = await h.call("POST", PATH, "org_roles", { kind: "webhook", url: HOOK }, as);
      expect(add.status).toBe(403);
      expect(add.json.error.code).toBe("permission_denied");
      expect((await h.call("PATCH", `${PATH}/${id}`, "org_roles", { disabled: true }, as)).status).toBe(403);
      expect((await h.call("POST", `${PATH}/${id}/test`, "org_roles", undefined, as)).status).toBe(403);
      expect((await h.call("DELETE", `${PATH}/${id}`, "org_roles", undefined, as)).status).toBe(403);
    }
    expect((await h.call("PATCH", `${PATH}/${id}`, "org_roles", { name: "dev" }, { role: "member", credential: "session" })).status).toBe(200);
    expect((await h.call("GET", PATH, "org_roles")).json.data).toMatchObject([{ id, disabled: false, name: "dev" }]);
  });

  it("refuses an inference key and a request without the signed identity", async () => {
    expect((await h.call("GET", PATH, "org_roles", undefined, { credential: "inference" })).status).toBe(403);
    const unsigned = await fetch(`${h.base}${PATH}`);
    expect(unsigned.status).toBe(401);
  });
});
