import { createLogger } from "@router/logging";

const SECRET = "sk-or-v1-super-secret-value";

/** A logger writing synchronously into memory; returns the lines it wrote. */
function capture(opts: { level?: string; base?: Record<string, unknown> } = {}) {
  const chunks: string[] = [];
  const log = createLogger({ ...opts, destination: { write: (s: string) => void chunks.push(s) } });
  const output = () => chunks.join("");
  const lines = () =>
    output()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { log, output, lines };
}

describe("createLogger redaction", () => {
  it.each([
    ["a top-level authorization", { authorization: `Bearer ${SECRET}` }],
    ["an authorization header", { headers: { authorization: `Bearer ${SECRET}` } }],
    ["a request's authorization header", { req: { headers: { authorization: `Bearer ${SECRET}` } } }],
    ["an x-api-key header", { headers: { "x-api-key": SECRET } }],
    ["a request's x-api-key header", { req: { headers: { "x-api-key": SECRET } } }],
    ["an x-goog-api-key header", { headers: { "x-goog-api-key": SECRET } }],
    ["a request's x-goog-api-key header", { req: { headers: { "x-goog-api-key": SECRET } } }],
    ["a cookie header", { headers: { cookie: `session=${SECRET}` } }],
    ["a request's cookie header", { req: { headers: { cookie: `session=${SECRET}` } } }],
    ["a set-cookie header", { headers: { "set-cookie": [`session=${SECRET}`] } }],
    ["a response's set-cookie header", { res: { headers: { "set-cookie": [`session=${SECRET}`] } } }],
    ["an upstream call's x-api-key header", { upstream: { headers: { "x-api-key": SECRET } } }],
    ["an x-router-identity header", { headers: { "x-router-identity": SECRET } }],
    ["a request's x-router-identity header", { req: { headers: { "x-router-identity": SECRET } } }],
    ["an api_key", { api_key: SECRET }],
    ["a nested api_key", { provider: { api_key: SECRET } }],
    ["an apiKey", { apiKey: SECRET }],
    ["a nested apiKey", { credential: { apiKey: SECRET } }],
    ["a key", { key: SECRET }],
    ["a secret", { upstream: { secret: SECRET } }],
    ["a password", { user: { password: SECRET } }],
    ["chat messages", { messages: [{ role: "user", content: SECRET }] }],
    ["nested chat messages", { request: { messages: [{ role: "user", content: SECRET }] } }],
    ["a prompt", { prompt: SECRET }],
    ["a nested prompt", { request: { prompt: SECRET } }],
    ["content", { content: SECRET }],
    ["nested content", { choice: { content: SECRET } }],
    ["a completion", { completion: SECRET }],
    ["a request body", { body: { anything: SECRET } }],
    ["a nested request body", { req: { body: { anything: SECRET } } }],
  ])("never writes %s", (_label, fields) => {
    const { log, output } = capture();
    log.info({ ...fields, model: "openai/gpt-4o", orgId: "org_123" }, "gateway.request.received");
    const text = output();
    expect(text).not.toContain(SECRET);
    expect(text).toContain("[redacted]");
    expect(text).toContain("openai/gpt-4o");
    expect(text).toContain("org_123");
    expect(text).toContain("gateway.request.received");
  });

  it("keeps the other headers of a request it redacts", () => {
    const { log, lines } = capture();
    log.info({ req: { method: "POST", headers: { authorization: `Bearer ${SECRET}`, "user-agent": "curl/8" } } }, "x");
    const [line] = lines();
    expect(line).toMatchObject({
      req: { method: "POST", headers: { authorization: "[redacted]", "user-agent": "curl/8" } },
    });
  });

  it("keeps metadata beside redacted message bodies", () => {
    const { log, lines } = capture();
    log.info({ messages: [{ role: "user", content: SECRET }], prompt_tokens: 12, finish_reason: "stop" }, "x");
    expect(lines()[0]).toMatchObject({ messages: "[redacted]", prompt_tokens: 12, finish_reason: "stop" });
  });
});

describe("createLogger format", () => {
  it("writes one JSON line per entry with a level label, ISO time, message and base fields", () => {
    const { log, lines } = capture({ base: { service: "ledger" } });
    log.warn({ holdId: "hold_1" }, "ledger.hold.expired");
    const [line] = lines();
    expect(line).toMatchObject({ level: "warn", service: "ledger", holdId: "hold_1", msg: "ledger.hold.expired" });
    expect(String(line!.time)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it("drops entries below its level", () => {
    const { log, lines } = capture({ level: "warn" });
    log.info("hidden");
    log.error("shown");
    expect(lines().map((l) => l.msg)).toEqual(["shown"]);
  });

  it("defaults to info without pid or hostname noise", () => {
    const { log, lines } = capture();
    log.debug("hidden");
    log.info("shown");
    const all = lines();
    expect(all.map((l) => l.msg)).toEqual(["shown"]);
    expect(all[0]).not.toHaveProperty("pid");
    expect(all[0]).not.toHaveProperty("hostname");
  });

  it("redacts in child loggers too", () => {
    const { log, output } = capture();
    log.child({ service: "gateway" }).info({ headers: { authorization: `Bearer ${SECRET}` } }, "x");
    expect(output()).not.toContain(SECRET);
    expect(output()).toContain("gateway");
  });
});
