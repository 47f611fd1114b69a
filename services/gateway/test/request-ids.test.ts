import { createLogger } from "@router/logging";
import { call, newOrganisation, startHarness, type Harness } from "./harness";

/**
 * Every answer of the gateway carries `x-request-id`, and every 5xx is logged once under it. Routing
 * is unreachable in this harness (its client points at a closed port), so every chat request is a
 * 503 `router.routing_unavailable`, the failure that went unlogged before.
 */

const lines: string[] = [];
const log = createLogger({ level: "info", destination: { write: (s: string) => void lines.push(s) } });
const PROBLEMS = new Set(["warn", "error", "fatal"]);
const logged = () => lines.join("").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

let h: Harness;
let mgmt: string;
let inference: string;

beforeAll(async () => {
  h = await startHarness("gwreqid", { log });
  mgmt = (await newOrganisation(h)).managementKey;
  inference = (await call(h.url, "POST", "/v1/keys", { key: mgmt, body: { name: "inference" } })).body.data.key;
});
afterAll(() => h.close());

describe("x-request-id", () => {
  it("is on every management answer, a fresh one each time, never the caller's", async () => {
    const created = await call(h.url, "POST", "/v1/keys", { key: mgmt, body: { name: "k2" }, headers: { "x-request-id": "mine-1" } });
    const refused = await call(h.url, "POST", "/v1/keys", { key: mgmt, body: { name: 42 } });
    const unknown = await call(h.url, "GET", "/v1/nothing-here", { key: mgmt });
    expect([created.status, refused.status, unknown.status]).toEqual([201, 400, 404]);
    const ids = [created, refused, unknown].map((r) => r.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(/^req-[0-9a-f-]{36}$/);
    expect(new Set(ids).size).toBe(3);
  });

  it("is the generation id on a chat 5xx, which is logged once with it", async () => {
    lines.length = 0;
    const res = await call(h.url, "POST", "/v1/chat/completions", {
      key: inference,
      body: { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }] },
    });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe("router.routing_unavailable");
    const id = res.headers.get("x-request-id");
    expect(id).toMatch(/^gen-[0-9a-f]{32}$/);
    const failures = logged().filter((l) => PROBLEMS.has(l.level as string) && l.id === id);
    expect(failures).toEqual([expect.objectContaining({ msg: "gateway.chat.unavailable", status: 503, code: "router.routing_unavailable" })]);
  });

  it("is on a body too deep for any route, and the 400 names the field", async () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    const chat = await call(h.url, "POST", "/v1/chat/completions", {
      key: inference,
      rawBody: `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"metadata":{"k":${deep}}}`,
    });
    expect(chat.status).toBe(400);
    expect(chat.headers.get("x-request-id")).toMatch(/^gen-/);
    expect(chat.body.error).toMatchObject({ code: "invalid_request", details: { field: "metadata.k.0.0.0.0.0.0", max_depth: 128 } });
    const key = await call(h.url, "POST", "/v1/keys", { key: mgmt, rawBody: `{"name":"k","metadata":${deep}}` });
    expect(key.status).toBe(400);
    expect(key.headers.get("x-request-id")).toMatch(/^req-/);
    expect(key.body.error.details).toEqual({ field: "metadata.0.0.0.0.0.0.0", max_depth: 128 });
  });
});
