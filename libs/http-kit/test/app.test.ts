import type { Express } from "express";
import { DomainError, invalid } from "@router/errors";
import {
  createHttpApp,
  finishApp,
  IDENTITY_HEADER,
  identityOf,
  identityPublicKeys,
  identitySigningKey,
  listen,
  MAX_JSON_DEPTH,
  parseInput,
  requireIdentity,
  routeAhead,
  shouldRetry,
  signIdentity,
  tooDeepPath,
  writeHttpError,
  writeJson,
  type Identity,
  type RunningHttpServer,
} from "@router/http-kit";
import { generateIdentityKeyPair } from "@router/config";
import { createLogger } from "@router/logging";
import { z } from "zod";

const edge = generateIdentityKeyPair();
const SIGNER = identitySigningKey(edge.signingKey);
const KEYS = identityPublicKeys(edge.publicKeys);
const logLines: string[] = [];
const log = createLogger({ level: "error", destination: { write: (s: string) => void logLines.push(s) } });

const identity: Identity = {
  orgId: "org_1",
  credential: "management",
  keyHash: "hash",
  keyName: "ci",
  workspaceId: null,
  role: "admin",
  userId: null,
  operator: false,
};

const chatSchema = z.object({
  model: z.string(),
  messages: z.array(z.object({ role: z.enum(["system", "user", "assistant"]), content: z.string() })).min(1),
});

function buildApp(): Express {
  const app = createHttpApp({ log, bodyLimit: "1kb", bodyLimits: { "/echo-large": "8kb" } });
  app.post("/echo-large", (req, res) => {
    res.json({ received: req.body as unknown });
  });
  app.post("/echo", (req, res) => {
    res.json({ received: req.body as unknown });
  });
  app.post("/chat", (req, res) => {
    const input = parseInput(chatSchema, req.body);
    res.json({ model: input.model, turns: input.messages.length });
  });
  app.get("/search", (req, res) => {
    const q = parseInput(z.object({ limit: z.coerce.number().int().max(100) }), req.query, "query");
    res.json(q);
  });
  app.get("/budget", () => {
    throw new DomainError("budget_exceeded", "key limit of $5 reached", { details: { limit_usd: 5 } });
  });
  app.get("/teapot", () => {
    throw new DomainError("router.run_closed", "the run is closed", { status: 409, details: { run_status: "done" } });
  });
  app.get("/missing-field", () => {
    throw invalid("max_tokens", "must be positive");
  });
  app.get("/async-failure", async () => {
    await Promise.resolve();
    throw new Error("db password=hunter2 rejected");
  });
  app.get("/sync-failure", () => {
    throw new Error("connection string postgres://u:hunter2@db leaked");
  });
  app.get("/internal", requireIdentity(KEYS), (req, res) => {
    res.json(identityOf(req));
  });
  app.get("/unguarded", (req, res) => {
    res.json(identityOf(req));
  });
  return finishApp(app, log);
}

let server: RunningHttpServer;
let base: string;

beforeAll(async () => {
  server = await listen(buildApp(), 0);
  base = `http://127.0.0.1:${server.port}`;
});

afterAll(async () => {
  await server.close();
});

beforeEach(() => {
  logLines.length = 0;
});

async function call(path: string, init: RequestInit = {}) {
  const res = await fetch(`${base}${path}`, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? (JSON.parse(text) as any) : undefined };
}

const postJson = (path: string, body: string, headers: Record<string, string> = {}) =>
  call(path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

describe("createHttpApp + finishApp", () => {
  it("listens on the port the OS picked", () => {
    expect(server.port).toBeGreaterThan(0);
  });

  it("parses JSON bodies", async () => {
    const res = await postJson("/echo", JSON.stringify({ a: 1 }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: { a: 1 } });
  });

  it("parses vendor +json bodies", async () => {
    const res = await postJson("/echo", JSON.stringify({ a: 2 }), { "content-type": "application/merge-patch+json" });
    expect(res.body).toEqual({ received: { a: 2 } });
  });

  it("does not fingerprint itself", async () => {
    const res = await postJson("/echo", "{}");
    expect(res.headers.get("x-powered-by")).toBeNull();
    expect(res.headers.get("etag")).toBeNull();
  });

  it("answers malformed JSON with a 400 invalid_request envelope", async () => {
    const res = await postJson("/echo", '{"model": ');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: { status: 400, code: "invalid_request", message: expect.stringContaining("malformed JSON") },
    });
  });

  it("answers a body past the limit with 413 payload_too_large", async () => {
    const res = await postJson("/echo", JSON.stringify({ text: "x".repeat(4096) }));
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ status: 413, code: "payload_too_large" });
  });

  it("takes a larger body on a path given its own limit, and still refuses one past it", async () => {
    const res = await postJson("/echo-large", JSON.stringify({ text: "x".repeat(4096) }));
    expect(res.status).toBe(200);
    expect((await postJson("/echo-large", JSON.stringify({ text: "x".repeat(9000) }))).status).toBe(413);
  });

  it("answers an unknown route with a 404 envelope naming it", async () => {
    const res = await call("/v1/nothing-here");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error: { status: 404, code: "not_found", message: "no route for GET /v1/nothing-here" },
    });
  });

  it("answers a known path with the wrong method with a 404 envelope", async () => {
    const res = await call("/budget", { method: "DELETE" });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
  });

  it("maps a DomainError to its default status, code, message and details", async () => {
    const res = await call("/budget");
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      error: { status: 403, code: "budget_exceeded", message: "key limit of $5 reached", details: { limit_usd: 5 } },
    });
  });

  it("keeps an explicit status on a DomainError", async () => {
    const res = await call("/teapot");
    expect(res.status).toBe(409);
    expect(res.body.error).toEqual({
      status: 409,
      code: "router.run_closed",
      message: "the run is closed",
      details: { run_status: "done" },
    });
  });

  it("maps invalid() to a 400 naming the field", async () => {
    const res = await call("/missing-field");
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      status: 400,
      code: "invalid_request",
      message: "max_tokens: must be positive",
      details: { field: "max_tokens" },
    });
  });

  it.each([["/sync-failure"], ["/async-failure"]])(
    "answers a plain Error thrown in %s with 500 internal without leaking its message",
    async (path) => {
      const res = await call(path);
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: { status: 500, code: "internal", message: "internal error" } });
      expect(res.text).not.toContain("hunter2");
    },
  );

  it("logs a 500 with the route and the response's request id for operators", async () => {
    const res = await call("/sync-failure");
    const line = JSON.parse(logLines.join("").split("\n")[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: "error", msg: "http.request.failed", method: "GET", path: "/sync-failure", status: 500 });
    expect(line.requestId).toBe(res.headers.get("x-request-id"));
    expect(line.requestId).toMatch(/^req-/);
  });

  it("does not log client errors as failures", async () => {
    await call("/budget");
    expect(logLines).toEqual([]);
  });
});

/** `depth` arrays, one inside the other, as JSON text. */
const nestedArrays = (depth: number): string => "[".repeat(depth) + "]".repeat(depth);

describe("JSON depth limit", () => {
  // A body 100,000 levels deep is 200 kB: past the shared app's 1 kB limit.
  let roomy: RunningHttpServer;
  beforeAll(async () => {
    const app = createHttpApp({ log, bodyLimit: "1mb" });
    app.post("/echo", (req, res) => {
      res.json({ received: req.body as unknown });
    });
    roomy = await listen(finishApp(app, log), 0);
  });
  afterAll(() => roomy.close());

  const postRoomy = (body: string) =>
    fetch(`http://127.0.0.1:${roomy.port}/echo`, { method: "POST", headers: { "content-type": "application/json" }, body });

  it("takes a body nested exactly MAX_JSON_DEPTH levels deep", async () => {
    // The body object is level 1, so its field holds MAX_JSON_DEPTH - 1 levels.
    const res = await postRoomy(`{"schema":${nestedArrays(MAX_JSON_DEPTH - 1)}}`);
    expect(res.status).toBe(200);
  });

  it.each([MAX_JSON_DEPTH, 5_000, 100_000])("answers a field nested %i levels deep with a 400 naming the field", async (depth) => {
    const res = await postRoomy(`{"model":"m","tools":[{"function":{"parameters":${nestedArrays(depth)}}}]}`);
    const body = (await res.json()) as { error: unknown };
    expect(res.status).toBe(400);
    expect(body.error).toEqual({
      status: 400,
      code: "invalid_request",
      message: `tools.0.function.parameters.0.0.0.0: nested more than ${MAX_JSON_DEPTH} levels deep`,
      details: { field: "tools.0.function.parameters.0.0.0.0", max_depth: MAX_JSON_DEPTH },
    });
  });

  it("names an object's keys on the way down", () => {
    const deep: Record<string, unknown> = {};
    let at = deep;
    for (let i = 0; i < MAX_JSON_DEPTH + 5; i++) {
      const next: Record<string, unknown> = {};
      at[`k${i}`] = next;
      at = next;
    }
    expect(tooDeepPath({ flat: "x", metadata: deep })?.slice(0, 3)).toEqual(["metadata", "k0", "k1"]);
    expect(tooDeepPath({ metadata: deep })).toHaveLength(MAX_JSON_DEPTH);
    expect(tooDeepPath({ metadata: { a: [1, "x", null, { b: {} }] } })).toBeNull();
  });
});

describe("x-request-id", () => {
  it("gives every response an id, errors included", async () => {
    const ok = await postJson("/echo", "{}");
    const notFound = await call("/v1/nothing-here");
    const failed = await call("/sync-failure");
    const ids = [ok, notFound, failed].map((r) => r.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(/^req-[0-9a-f-]{36}$/);
    expect(new Set(ids).size).toBe(3);
  });

  it("echoes a valid id the caller sent (the gateway's, on an internal service) and replaces an invalid one", async () => {
    expect((await call("/budget", { headers: { "x-request-id": "gen-0123abcd" } })).headers.get("x-request-id")).toBe("gen-0123abcd");
    const replaced = await call("/budget", { headers: { "x-request-id": "<script>" } });
    expect(replaced.headers.get("x-request-id")).toMatch(/^req-/);
  });

  it("never takes the caller's id at the public edge", async () => {
    const edge = createHttpApp({ log, requestIds: "issue" });
    edge.get("/seen", (req, res) => {
      res.json({ forwarded: req.headers["x-request-id"] });
    });
    const edgeServer = await listen(finishApp(edge, log), 0);
    try {
      const res = await fetch(`http://127.0.0.1:${edgeServer.port}/seen`, { headers: { "x-request-id": "gen-0123abcd" } });
      const id = res.headers.get("x-request-id");
      expect(id).toMatch(/^req-/);
      // What the edge forwards onwards is its own id, not the caller's.
      expect(((await res.json()) as { forwarded: string }).forwarded).toBe(id);
    } finally {
      await edgeServer.close();
    }
  });
});

describe("x-should-retry", () => {
  it.each([
    ["/budget", 403],
    ["/missing-field", 400],
    ["/teapot", 409],
    ["/v1/nothing-here", 404],
  ])("tells clients not to retry %s (%i): the same request cannot succeed", async (path, status) => {
    const res = await call(path);
    expect(res.status).toBe(status);
    expect(res.headers.get("x-should-retry")).toBe("false");
  });

  it("tells clients not to retry a body past the limit (413)", async () => {
    const res = await postJson("/echo", JSON.stringify({ text: "x".repeat(4096) }));
    expect(res.headers.get("x-should-retry")).toBe("false");
  });

  it("tells clients to retry a 500, and says nothing on a success", async () => {
    expect((await call("/sync-failure")).headers.get("x-should-retry")).toBe("true");
    expect((await postJson("/echo", "{}")).headers.get("x-should-retry")).toBeNull();
  });

  it.each([
    [408, true],
    [429, true],
    [503, true],
    [529, true],
    [401, false],
    [413, false],
    [422, false],
  ])("marks status %i retryable: %s", (status, retry) => {
    expect(shouldRetry(status)).toBe(retry);
  });
});

describe("parseInput", () => {
  it("passes a valid body through", async () => {
    const res = await postJson("/chat", JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ model: "m", turns: 1 });
  });

  it("names the nested field that is wrong", async () => {
    const res = await postJson(
      "/chat",
      JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }, { role: "robot", content: "x" }] }),
    );
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
    expect(res.body.error.message).toMatch(/^messages\.1\.role: /);
    expect(res.body.error.details.field).toBe("messages.1.role");
  });

  it("lists every issue, not just the first", async () => {
    const res = await postJson("/chat", JSON.stringify({ messages: [] }));
    const fields = (res.body.error.details.issues as { field: string }[]).map((i) => i.field).sort();
    expect(fields).toEqual(["messages", "model"]);
  });

  it("prefixes the field with where the input came from", async () => {
    const res = await call("/search?limit=500");
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe("query.limit");
  });

  it("answers a body that is not an object with a 400, never a 500", async () => {
    const res = await postJson("/chat", "[1,2]");
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
  });

  it("throws a DomainError naming the field when called directly", () => {
    expect(() => parseInput(z.object({ n: z.number() }), { n: "1" }, "params")).toThrow(
      expect.objectContaining({ code: "invalid_request", status: 400, details: expect.objectContaining({ field: "params.n" }) }),
    );
  });
});

describe("requireIdentity", () => {
  it("exposes the signed identity to the handler", async () => {
    const res = await call("/internal", { headers: { [IDENTITY_HEADER]: await signIdentity(identity, SIGNER) } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(identity);
  });

  it("refuses a request without the identity header with a 401 envelope", async () => {
    const res = await call("/internal");
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ status: 401, code: "unauthorized" });
  });

  it("refuses an identity signed by another Ed25519 key", async () => {
    const other = identitySigningKey(generateIdentityKeyPair().signingKey);
    const res = await call("/internal", { headers: { [IDENTITY_HEADER]: await signIdentity(identity, other) } });
    expect(res.status).toBe(401);
  });

  it("refuses garbage in the identity header with a 401, never a 500", async () => {
    for (const header of ["garbage", "a.b", "...", "eyJ9.x"]) {
      const res = await call("/internal", { headers: { [IDENTITY_HEADER]: header } });
      expect(res.status).toBe(401);
    }
  });

  it("makes identityOf refuse a route that has no identity", async () => {
    const res = await call("/unguarded", { headers: { [IDENTITY_HEADER]: await signIdentity(identity, SIGNER) } });
    expect(res.status).toBe(401);
  });
});

describe("routeAhead", () => {
  let ahead: RunningHttpServer;
  let url: string;
  const served: string[] = [];

  beforeAll(async () => {
    const app = createHttpApp({ log });
    app.post("/v1/other", (_req, res) => void res.json({ by: "express" }));
    finishApp(app, log);
    const listener = routeAhead(
      {
        method: "POST",
        path: "/v1/chat/completions",
        listener: (req, res) => {
          served.push(req.url ?? "");
          if (req.headers["x-fail"]) writeHttpError(req, res, invalid("x-fail", "asked to fail"), log);
          else writeJson(res, 201, { by: "ahead" }, { "x-extra": "1" });
        },
      },
      app,
    );
    ahead = await listen(listener, 0);
    url = `http://127.0.0.1:${ahead.port}`;
  });

  afterAll(() => ahead.close());

  beforeEach(() => {
    served.length = 0;
  });

  it.each(["/v1/chat/completions", "/v1/chat/completions/", "/V1/Chat/Completions", "/v1/chat/completions?x=1"])(
    "hands %s to the route, as express would match it",
    async (path) => {
      const res = await fetch(`${url}${path}`, { method: "POST", body: "{}" });
      expect(res.status).toBe(201);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(res.headers.get("x-extra")).toBe("1");
      expect(await res.json()).toEqual({ by: "ahead" });
      expect(served).toEqual([path]);
    },
  );

  it.each([
    ["GET", "/v1/chat/completions"],
    ["POST", "/v1/chat/completions/more"],
    ["POST", "/v1/chat"],
  ])("leaves %s %s to the express app", async (method, path) => {
    const res = await fetch(`${url}${path}`, { method });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("not_found");
    expect(served).toEqual([]);
  });

  it("still serves every other route through express", async () => {
    const res = await fetch(`${url}/v1/other`, { method: "POST" });
    expect(await res.json()).toEqual({ by: "express" });
  });

  it("answers an error thrown on the route with the envelope", async () => {
    const res = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "x-fail": "1" } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({ code: "invalid_request", details: { field: "x-fail" } });
  });
});
