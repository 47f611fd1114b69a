import { createServer, Socket, type Server } from "node:net";
import { Writable } from "node:stream";
import Redis from "ioredis";
import type { Request, Response } from "express";
import { createHttpApp, finishApp, listen, requireIdentity, type IdentityPublicKeys, type RunningHttpServer } from "@router/http-kit";
import { createLogger } from "@router/logging";
import { metricSample, TEST_REDIS_URL, waitFor } from "@router/testkit";
import { describeLimit, limitTable, perDay, perMinute, RATE_LIMITS } from "../src/rate-limits/limits";
import { RateLimitStore } from "../src/rate-limits/rate-limiter";
import { call, newOrganisation, publicKeysOf, silentLog, startHarness, type ApiResponse, type Harness, type HarnessOptions } from "./harness";

/** Stands in for activity (the CSV export, any other activity read) and routing (the public catalog). */
async function startOwners(publicKeys: () => IdentityPublicKeys): Promise<RunningHttpServer> {
  const app = createHttpApp({ log: silentLog });
  const ok = (_req: Request, res: Response) => res.json({ data: [] });
  const verify = (req: Request, res: Response, next: () => void) => requireIdentity(publicKeys())(req, res, next);
  app.get("/v1/activity/export", verify, (_req: Request, res: Response) => {
    res.setHeader("content-type", "text/csv");
    res.end("created_at,request_id\n");
  });
  app.all(["/v1/activity", "/v1/activity/*rest"], verify, ok);
  app.get(["/v1/models", "/v1/models/*rest", "/v1/providers"], ok);
  return listen(finishApp(app, silentLog), 0);
}

/** A harness whose forwarded routes reach `startOwners`. */
async function harnessWithOwners(label: string, opts: HarnessOptions): Promise<{ h: Harness; close(): Promise<void> }> {
  let publicKeys: IdentityPublicKeys | undefined;
  const owners = await startOwners(() => {
    if (!publicKeys) throw new Error("the gateway is not started yet");
    return publicKeys;
  });
  const url = `http://127.0.0.1:${owners.port}`;
  const h = await startHarness(label, { activityUrl: url, routingUrl: url, ...opts });
  publicKeys = publicKeysOf(h.secrets);
  return {
    h,
    async close() {
      await h.close();
      await owners.close();
    },
  };
}

const limitHeaders = (res: ApiResponse) => ({
  limit: res.headers.get("x-ratelimit-limit"),
  remaining: res.headers.get("x-ratelimit-remaining"),
  reset: Number(res.headers.get("x-ratelimit-reset")),
});

/** The refusal: 429, the envelope's code and message, Retry-After in whole seconds within the window. */
function expectRefused(res: ApiResponse, message: string, windowSeconds: number) {
  expect(res.status).toBe(429);
  expect(res.body.error).toMatchObject({ status: 429, code: "rate_limited", message });
  const retryAfter = res.headers.get("retry-after");
  expect(retryAfter).toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(retryAfter)).toBeLessThanOrEqual(windowSeconds);
  expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
}

describe("the table of limits", () => {
  it("holds the product's numbers", () => {
    expect(RATE_LIMITS.catalog).toEqual([perMinute(120), perDay(20_000)]);
    expect(RATE_LIMITS.management).toEqual([perMinute(300), perDay(20_000)]);
    expect(RATE_LIMITS.activity_export).toEqual([perMinute(6)]);
  });

  it("replaces the windows of named limits only, and refuses empty or fractional windows", () => {
    const table = limitTable({ management: [perMinute(3)] });
    expect(table.management).toEqual([perMinute(3)]);
    expect(table.catalog).toEqual(RATE_LIMITS.catalog);
    expect(() => limitTable({ management: [] })).toThrow(/management/);
    expect(() => limitTable({ catalog: [{ points: 0, seconds: 60 }] })).toThrow(/catalog/);
    expect(() => limitTable({ catalog: [{ points: 5, seconds: 0.5 }] })).toThrow(/catalog/);
  });

  it("names the limit, its number, its window and its subject in a refusal", () => {
    expect(describeLimit("management", perMinute(300), "key")).toBe("management rate limit: 300 requests per minute per key");
    expect(describeLimit("activity_export", perMinute(6), "key")).toBe("CSV export rate limit: 6 requests per minute per key");
    expect(describeLimit("catalog", perDay(20_000), "address")).toBe("catalog rate limit: 20000 requests per day per address");
  });
});

describe("the management limit, on Redis", () => {
  let env: { h: Harness; close(): Promise<void> };
  let h: Harness;
  let admin: string;
  beforeAll(async () => {
    env = await harnessWithOwners("gw_rl_mgmt", {
      redisUrl: TEST_REDIS_URL,
      metricsPort: 0,
      rateLimits: { management: [perMinute(5)], activity_export: [perMinute(2)] },
    });
    h = env.h;
    admin = `http://127.0.0.1:${h.gateway.metricsPort}`;
  });
  afterAll(() => env.close());

  it("counts every management request of a key and refuses past the limit with 429, Retry-After and the headers", async () => {
    const { managementKey } = await newOrganisation(h, "Counted");
    for (let i = 1; i <= 5; i++) {
      const res = await call(h.url, "GET", "/v1/organization", { key: managementKey });
      expect(res.status).toBe(200);
      const headers = limitHeaders(res);
      expect(headers).toMatchObject({ limit: "5", remaining: String(5 - i) });
      expect(headers.reset).toBeGreaterThanOrEqual(1);
      expect(headers.reset).toBeLessThanOrEqual(60);
    }
    // Any management route, a write or a forwarded one, draws on the same budget.
    const refused = await call(h.url, "POST", "/v1/workspaces", { key: managementKey, body: { name: "one too many" } });
    expectRefused(refused, "management rate limit: 5 requests per minute per key", 60);
    expect(refused.headers.get("x-ratelimit-limit")).toBe("5");
    expect((await call(h.url, "GET", "/v1/activity", { key: managementKey })).status).toBe(429);
    const workspaces = await h.consoleDb.query<{ n: string }>("SELECT count(*)::text AS n FROM workspaces WHERE name = 'one too many'");
    expect(workspaces.rows[0]!.n).toBe("0");
  });

  it("gives each key its own budget: one key's exhaustion leaves another untouched", async () => {
    const a = await newOrganisation(h, "Spent");
    const b = await newOrganisation(h, "Fresh");
    for (let i = 0; i < 5; i++) await call(h.url, "GET", "/v1/organization", { key: a.managementKey });
    expect((await call(h.url, "GET", "/v1/organization", { key: a.managementKey })).status).toBe(429);
    const other = await call(h.url, "GET", "/v1/organization", { key: b.managementKey });
    expect(other.status).toBe(200);
    expect(limitHeaders(other)).toMatchObject({ limit: "5", remaining: "4" });
  });

  it("counts a dashboard session by the session, apart from the key it was exchanged for", async () => {
    const { managementKey } = await newOrganisation(h, "Session Co");
    const exchange = await fetch(`${h.url}/v1/auth/exchange`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ key: managementKey }),
    });
    expect(exchange.status).toBe(200);
    const cookie = exchange.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    for (let i = 0; i < 5; i++) await call(h.url, "GET", "/v1/organization", { key: managementKey });
    expect((await call(h.url, "GET", "/v1/organization", { key: managementKey })).status).toBe(429);
    for (let i = 0; i < 5; i++) expect((await call(h.url, "GET", "/v1/keys", { headers: { cookie } })).status).toBe(200);
    expectRefused(await call(h.url, "GET", "/v1/keys", { headers: { cookie } }), "management rate limit: 5 requests per minute per session", 60);
  });

  it("shares one budget between two gateway replicas on the same Redis", async () => {
    const { managementKey } = await newOrganisation(h, "Replicated");
    const other = await h.startAnother();
    const otherUrl = `http://127.0.0.1:${other.port}`;
    const remaining: Array<string | null> = [];
    for (let i = 0; i < 5; i++) {
      const res = await call(i % 2 === 0 ? h.url : otherUrl, "GET", "/v1/organization", { key: managementKey });
      expect(res.status).toBe(200);
      remaining.push(res.headers.get("x-ratelimit-remaining"));
    }
    expect(remaining).toEqual(["4", "3", "2", "1", "0"]);
    expectRefused(await call(otherUrl, "GET", "/v1/organization", { key: managementKey }), "management rate limit: 5 requests per minute per key", 60);
    expect((await call(h.url, "GET", "/v1/organization", { key: managementKey })).status).toBe(429);
  });

  it("gives the CSV export its own tighter bucket per key, on top of the management limit", async () => {
    const a = await newOrganisation(h, "Exporter");
    const b = await newOrganisation(h, "Other Exporter");
    for (let i = 0; i < 2; i++) {
      const res = await call(h.url, "GET", "/v1/activity/export", { key: a.managementKey });
      expect(res.status).toBe(200);
      expect(res.body).toBe("created_at,request_id\n");
    }
    const third = await call(h.url, "GET", "/v1/activity/export", { key: a.managementKey });
    expectRefused(third, "CSV export rate limit: 2 requests per minute per key", 60);
    expect(third.headers.get("x-ratelimit-limit")).toBe("2");
    // The management budget was drawn on by all three (5 - 3), and other reads still pass.
    const read = await call(h.url, "GET", "/v1/activity", { key: a.managementKey });
    expect(read.status).toBe(200);
    expect(limitHeaders(read)).toMatchObject({ limit: "5", remaining: "1" });
    // The headers of an export name the tighter of its two limits.
    const otherExport = await call(h.url, "GET", "/v1/activity/export", { key: b.managementKey });
    expect(otherExport.status).toBe(200);
    expect(limitHeaders(otherExport)).toMatchObject({ limit: "2", remaining: "1" });
  });

  it("counts refusals by limit in gateway_rate_limit_refusals_total", async () => {
    const text = await (await fetch(`${admin}/metrics`)).text();
    expect(metricSample(text, "gateway_rate_limit_refusals_total", { limit: "management" })).toBeGreaterThanOrEqual(4);
    expect(metricSample(text, "gateway_rate_limit_refusals_total", { limit: "activity_export" })).toBe(1);
  });

  it("stays off the chat completion path", async () => {
    const res = await fetch(`${h.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(401);
    expect(res.headers.get("x-ratelimit-limit")).toBeNull();
  });

  it("reports a shared store in /health", async () => {
    expect((await call(h.url, "GET", "/health")).body.rate_limiting).toEqual({ store: "redis", shared: true });
  });
});

describe("windows", () => {
  let h: Harness;
  afterEach(() => h.close());

  it("refuses by the day once the day is spent, with a Retry-After up to a day", async () => {
    h = await startHarness("gw_rl_day", { redisUrl: TEST_REDIS_URL, rateLimits: { management: [perMinute(10), perDay(2)] } });
    const { managementKey } = await newOrganisation(h, "Daily");
    const first = await call(h.url, "GET", "/v1/organization", { key: managementKey });
    // The headers name the window closest to refusing: the day (1 left) rather than the minute (9 left).
    expect(limitHeaders(first)).toMatchObject({ limit: "2", remaining: "1" });
    expect(limitHeaders(first).reset).toBeGreaterThan(60);
    expect((await call(h.url, "GET", "/v1/organization", { key: managementKey })).status).toBe(200);
    const refused = await call(h.url, "GET", "/v1/organization", { key: managementKey });
    expectRefused(refused, "management rate limit: 2 requests per day per key", 86_400);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(60);
  });

  it("lets requests through again once the window has passed", async () => {
    h = await startHarness("gw_rl_reset", { redisUrl: TEST_REDIS_URL, rateLimits: { management: [{ points: 1, seconds: 1 }] } });
    const { managementKey } = await newOrganisation(h, "Resetting");
    expect((await call(h.url, "GET", "/v1/organization", { key: managementKey })).status).toBe(200);
    const refused = await call(h.url, "GET", "/v1/organization", { key: managementKey });
    expectRefused(refused, "management rate limit: 1 request per second per key", 1);
    await waitFor(async () => (await call(h.url, "GET", "/v1/organization", { key: managementKey })).status === 200, {
      timeoutMs: 3_000,
      intervalMs: 250,
      what: "the next window",
    });
  });
});

describe("per-address limits", () => {
  it("limits the public catalog per client address, ignoring X-Forwarded-For from an untrusted peer", async () => {
    const env = await harnessWithOwners("gw_rl_catalog", { redisUrl: TEST_REDIS_URL, rateLimits: { catalog: [perMinute(3)] } });
    try {
      const { h } = env;
      const first = await call(h.url, "GET", "/v1/models", { headers: { "x-forwarded-for": "198.51.100.1" } });
      expect(first.status).toBe(200);
      expect(limitHeaders(first)).toMatchObject({ limit: "3", remaining: "2" });
      // Every catalog route, and any X-Forwarded-For, counts against the socket's address.
      expect((await call(h.url, "GET", "/v1/models/openai/gpt-4o", { headers: { "x-forwarded-for": "198.51.100.2" } })).status).toBe(200);
      expect((await call(h.url, "GET", "/v1/providers", { headers: { "x-forwarded-for": "198.51.100.3" } })).status).toBe(200);
      expectRefused(
        await call(h.url, "GET", "/v1/models", { headers: { "x-forwarded-for": "198.51.100.4" } }),
        "catalog rate limit: 3 requests per minute per address",
        60,
      );
      // Management routes are counted per credential, not per address.
      const { managementKey } = await newOrganisation(h);
      expect((await call(h.url, "GET", "/v1/organization", { key: managementKey })).status).toBe(200);
    } finally {
      await env.close();
    }
  });

  it("honours X-Forwarded-For when the peer is a trusted proxy", async () => {
    const env = await harnessWithOwners("gw_rl_proxy", {
      redisUrl: TEST_REDIS_URL,
      trustedProxies: ["loopback"],
      rateLimits: { catalog: [perMinute(2)] },
    });
    try {
      const { h } = env;
      const from = (client: string) => call(h.url, "GET", "/v1/models", { headers: { "x-forwarded-for": client } });
      expect((await from("198.51.100.1")).status).toBe(200);
      expect((await from("198.51.100.1")).status).toBe(200);
      expectRefused(await from("198.51.100.1"), "catalog rate limit: 2 requests per minute per address", 60);
      // Another client behind the same proxy has its own budget.
      expect((await from("198.51.100.2")).status).toBe(200);
      // A client prepending an address of its choice is still counted by the address the proxy saw.
      expect((await from("203.0.113.50, 198.51.100.1")).status).toBe(429);
    } finally {
      await env.close();
    }
  });

  it("limits the key exchange, the invitation lookup and PKCE per address, bad requests included", async () => {
    const h = await startHarness("gw_rl_exchange", {
      redisUrl: TEST_REDIS_URL,
      rateLimits: { auth_exchange: [perMinute(2)], invitation_lookup: [perMinute(1)], pkce: [perMinute(1)] },
    });
    try {
      // A management key's prefix with a value no key has: unknown or revoked (401), still counted.
      expect((await call(h.url, "POST", "/v1/auth/exchange", { body: { key: "rt-mgmt-wrong" } })).status).toBe(401);
      expect((await call(h.url, "POST", "/v1/auth/exchange", { body: {} })).status).toBe(400);
      const { managementKey } = await newOrganisation(h);
      expectRefused(
        await call(h.url, "POST", "/v1/auth/exchange", { body: { key: managementKey } }),
        "key exchange rate limit: 2 requests per minute per address",
        60,
      );
      expect((await call(h.url, "POST", "/v1/invitations/lookup", { body: { token: "nope" } })).status).toBe(404);
      expectRefused(
        await call(h.url, "POST", "/v1/invitations/lookup", { body: { token: "nope" } }),
        "invitation lookup rate limit: 1 request per minute per address",
        60,
      );
      // PKCE describe and exchange share one bucket.
      expect((await call(h.url, "GET", "/v1/auth/pkce?code_challenge_method=plain")).status).toBe(400);
      const exchange = await call(h.url, "POST", "/v1/auth/keys", { body: { code: "x", code_verifier: "y".repeat(43) } });
      expect(exchange.status).toBe(429);
      expect(exchange.headers.get("access-control-allow-origin")).toBe("*");
    } finally {
      await h.close();
    }
  });
});

describe("without Redis", () => {
  it("counts in this instance's memory, per instance, and says so in /health", async () => {
    const h = await startHarness("gw_rl_memory", { rateLimits: { management: [perMinute(2)] } });
    try {
      expect((await call(h.url, "GET", "/health")).body.rate_limiting).toEqual({ store: "memory", shared: false });
      const { managementKey } = await newOrganisation(h);
      expect((await call(h.url, "GET", "/v1/organization", { key: managementKey })).status).toBe(200);
      expect((await call(h.url, "GET", "/v1/organization", { key: managementKey })).status).toBe(200);
      expectRefused(await call(h.url, "GET", "/v1/organization", { key: managementKey }), "management rate limit: 2 requests per minute per key", 60);
      // Another instance keeps its own count: nothing is shared without Redis.
      const other = await h.startAnother();
      expect((await call(`http://127.0.0.1:${other.port}`, "GET", "/v1/organization", { key: managementKey })).status).toBe(200);
    } finally {
      await h.close();
    }
  });
});

/**
 * A TCP relay to the test Redis that can be cut: while cut it accepts and drops connections (Redis
 * "unreachable" without reusing ports), and relays again once healed.
 */
async function startRelay(): Promise<{ url: string; cut(): void; heal(): void; close(): Promise<void> }> {
  const target = new URL(TEST_REDIS_URL);
  let open = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = new Socket();
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    upstream.connect(Number(target.port || 6379), target.hostname, () => {
      client.pipe(upstream).pipe(client);
    });
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `redis://127.0.0.1:${port}${target.pathname}`,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
    },
    heal() {
      open = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe("when Redis does not answer", () => {
  it("keeps serving: the gateway starts and limits in memory instead of failing requests", async () => {
    const h = await startHarness("gw_rl_down", { redisUrl: "redis://127.0.0.1:1", rateLimits: { management: [perMinute(2)] } });
    try {
      expect((await call(h.url, "GET", "/health")).body.rate_limiting).toEqual({ store: "redis", shared: false });
      const { managementKey } = await newOrganisation(h);
      expect((await call(h.url, "GET", "/v1/organization", { key: managementKey })).status).toBe(200);
      expect((await call(h.url, "GET", "/v1/organization", { key: managementKey })).status).toBe(200);
      expectRefused(await call(h.url, "GET", "/v1/organization", { key: managementKey }), "management rate limit: 2 requests per minute per key", 60);
    } finally {
      await h.close();
    }
  }, 20_000);

  it("logs the outage once, counts in memory meanwhile, and goes back to Redis when it answers", async () => {
    const relay = await startRelay();
    const lines: string[] = [];
    const log = createLogger({
      level: "info",
      destination: new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }),
    });
    const redis = new Redis(relay.url, { maxRetriesPerRequest: 1, commandTimeout: 500, retryStrategy: () => 100 });
    redis.on("error", () => undefined);
    const prefix = `test:rl:relay:${Date.now()}`;
    const store = new RateLimitStore({ redis, keyPrefix: prefix, log });
    const checker = new Redis(TEST_REDIS_URL);
    try {
      await store.ready(300);
      expect(store.shared).toBe(false);
      const limiter = store.limiter("management", [perMinute(3)]);
      const decisions = [];
      for (let i = 0; i < 4; i++) decisions.push(await limiter.consume("key:abc"));
      expect(decisions.map((d) => d?.allowed)).toEqual([true, true, true, false]);
      // Nothing reached Redis; the outage was logged once however often it was met.
      expect(await checker.exists(`${prefix}:management:60s:key:abc`)).toBe(0);
      expect(lines.filter((l) => l.includes("gateway.rate_limits.redis_unavailable"))).toHaveLength(1);

      relay.heal();
      await waitFor(() => store.shared, { timeoutMs: 10_000, what: "the store back on Redis" });
      expect(lines.filter((l) => l.includes("gateway.rate_limits.redis_restored"))).toHaveLength(1);
      expect((await limiter.consume("key:xyz"))?.remaining).toBe(2);
      expect(await checker.get(`${prefix}:management:60s:key:xyz`)).toBe("1");
    } finally {
      store.close();
      redis.disconnect();
      checker.disconnect();
      await relay.close();
    }
  }, 20_000);
});
