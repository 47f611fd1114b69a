import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mintKey } from "@router/api-keys";
import { SELF_CALL_HEADER } from "@router/management-api";
import { TEST_REDIS_URL } from "@router/testkit";
import type { RunningGateway } from "../src/app";
import { perMinute } from "../src/rate-limits/limits";
import { SelfCallTokens } from "../src/rate-limits/self-calls";
import { insertKey } from "../../console/src/keys/key-store";
import { call, newOrganisation, startHarness, type Harness } from "./harness";

/**
 * `/mcp` at the gateway: authenticated here, served by the console (a recording stand-in), and the
 * self-call token it adds counting the MCP client's address on any replica.
 */

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Records each request and answers as the console would: JSON for POST, 405 for anything else. */
async function startFakeConsole(): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      if (req.method === "POST") {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { from: "console" } }));
      } else {
        res.writeHead(405, { "content-type": "application/json", allow: "POST" }).end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "method not allowed" } }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server };
}

let h: Harness;
let fake: Awaited<ReturnType<typeof startFakeConsole>>;
let replica: RunningGateway;
let inference: string;
let management: string;

beforeAll(async () => {
  fake = await startFakeConsole();
  h = await startHarness("gwmcp", {
    consoleUrl: fake.url,
    redisUrl: TEST_REDIS_URL,
    // The test's own requests come from loopback: X-Forwarded-For names the client they stand for.
    trustedProxies: ["loopback"],
    rateLimits: { region: [perMinute(2)] },
  });
  replica = await h.startAnother();
  const org = await newOrganisation(h);
  management = org.managementKey;
  // Straight into the console's store: the console's HTTP routes are the recording stand-in here.
  const minted = mintKey("inference", h.secrets.ROUTER_KEY_PEPPER);
  const settings = { name: "mcp", workspaceId: org.workspaceId, limitNanos: null, limitReset: null, limitMode: "hard" as const, includeByokInLimit: false };
  await insertKey(h.consoleDb, org.orgId, minted, settings, h.clock.now());
  inference = minted.plaintext;
});
afterAll(async () => {
  await h.close();
  await new Promise((resolve) => fake.server.close(resolve));
});

const mcpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" };

describe("POST /mcp at the gateway", () => {
  it("refuses a missing key 401 and a management key 403 before the console sees anything", async () => {
    const before = fake.received.length;
    const ping = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
    const none = await call(h.url, "POST", "/mcp", { headers: mcpHeaders, rawBody: ping });
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe("unauthorized");
    const mgmt = await call(h.url, "POST", "/mcp", { key: management, headers: mcpHeaders, rawBody: ping });
    expect(mgmt.status).toBe(403);
    expect(mgmt.body.error.code).toBe("permission_denied");
    expect(fake.received.length).toBe(before);
  });

  it("forwards an inference key's message unread, with the caller's headers and a token naming the client's address", async () => {
    const malformed = '{"jsonrpc": "2.0", "id": 1,   ';
    const res = await call(h.url, "POST", "/mcp?x=1", {
      key: inference,
      rawBody: malformed,
      headers: {
        ...mcpHeaders,
        "user-agent": "agent/1.0",
        "http-referer": "https://app.example",
        "x-title": "An App",
        "mcp-protocol-version": "2025-06-18",
        "x-forwarded-for": "203.0.113.9",
        cookie: "router_session=abc",
        // A client's own token is never passed on: the gateway writes its own.
        [SELF_CALL_HEADER]: "forged.token",
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ jsonrpc: "2.0", id: 1, result: { from: "console" } });
    const got = fake.received.at(-1)!;
    expect(got).toMatchObject({ method: "POST", url: "/mcp?x=1", body: malformed });
    expect(got.headers).toMatchObject({
      authorization: `Bearer ${inference}`,
      "user-agent": "agent/1.0",
      "http-referer": "https://app.example",
      "x-title": "An App",
      "mcp-protocol-version": "2025-06-18",
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
    });
    expect(got.headers.cookie).toBeUndefined();
    const token = got.headers[SELF_CALL_HEADER] as string;
    expect(token).not.toBe("forged.token");
    expect(new SelfCallTokens(h.secrets.ROUTER_INTERNAL_SECRET, h.clock).verify(token)).toBe("203.0.113.9");
  });

  it("passes any other method to the console as it is, for its 405, with no token", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await call(h.url, method, "/mcp");
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
      expect(fake.received.at(-1)).toMatchObject({ method, url: "/mcp" });
      expect(fake.received.at(-1)?.headers[SELF_CALL_HEADER]).toBeUndefined();
    }
  });
});

describe("a tool's call with the token, on another replica", () => {
  /** The token the first gateway wrote when it forwarded /mcp for a client at `addr`. */
  const tokenFor = async (addr: string): Promise<string> => {
    const res = await call(h.url, "POST", "/mcp", { key: inference, headers: { ...mcpHeaders, "x-forwarded-for": addr }, rawBody: "{}" });
    expect(res.status).toBe(200);
    return fake.received.at(-1)!.headers[SELF_CALL_HEADER] as string;
  };
  const region = (headers: Record<string, string>) => call(`http://127.0.0.1:${replica.port}`, "GET", "/v1/region", { headers });

  it("counts the per-address limits for the MCP client, and a forged token for the request's own address", async () => {
    const token = await tokenFor("198.51.100.7");
    expect((await region({ [SELF_CALL_HEADER]: token })).status).toBe(200);
    expect((await region({ [SELF_CALL_HEADER]: token })).status).toBe(200);
    const refused = await region({ [SELF_CALL_HEADER]: token });
    expect(refused.status).toBe(429);
    expect(refused.body.error.details).toMatchObject({ limit: "region", max_requests: 2 });
    // The client it stands for is spent, wherever it calls from ...
    expect((await region({ "x-forwarded-for": "198.51.100.7" })).status).toBe(429);
    // ... while the address the calls came from (the console's: loopback here) is not.
    expect((await region({})).status).toBe(200);

    const forged = new SelfCallTokens("another deployment's secret", h.clock).issue("192.0.2.50");
    const own = { "x-forwarded-for": "192.0.2.60" };
    expect((await region({ ...own, [SELF_CALL_HEADER]: forged })).status).toBe(200);
    expect((await region({ ...own, [SELF_CALL_HEADER]: "garbage" })).status).toBe(200);
    // Both counted for 192.0.2.60, the request's own address; 192.0.2.50 is untouched.
    expect((await region(own)).status).toBe(429);
    expect((await region({ "x-forwarded-for": "192.0.2.50" })).status).toBe(200);
  });
});
