import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, httpReady, startNodeProcess, type ChildService } from "@router/testkit";
import { call, FakeLedger, testSecrets } from "./harness";

// The gateway as `node dist/main.js` runs it on a fresh machine: no DATABASE_URL, so the embedded
// PGlite, generated-or-given secrets, the in-process bus; beside it the console process, which owns
// keys and organisations, on its own PGlite. Needs the build (`make build`).
const MAIN = join(__dirname, "..", "dist", "main.js");
const CONSOLE_MAIN = join(__dirname, "..", "..", "console", "dist", "main.js");

describe("the gateway process with embedded defaults", () => {
  let dataDir: string;
  let ledger: FakeLedger;
  let ledgerAddr: string;
  let gateway: ChildService | null = null;
  let consoleProcess: ChildService | null = null;
  let consoleHttpUrl = "";
  let consoleGrpcAddr = "";
  const secrets = testSecrets();

  async function start(): Promise<{ url: string; metricsUrl: string; process: ChildService }> {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: build first (npx tsc -b services/gateway)`);
    const port = await freePort();
    const metricsPort = await freePort();
    const url = `http://127.0.0.1:${port}`;
    gateway = await startNodeProcess(
      "gateway",
      MAIN,
      {
        PORT: String(port),
        GATEWAY_METRICS_PORT: String(metricsPort),
        ROUTER_DATA_DIR: dataDir,
        LEDGER_GRPC_ADDR: ledgerAddr,
        CONSOLE_HTTP_URL: consoleHttpUrl,
        CONSOLE_GRPC_ADDR: consoleGrpcAddr,
        LOG_LEVEL: "info",
        ...secrets,
      },
      () => httpReady(`${url}/health`),
      60_000,
    );
    return { url, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, process: gateway };
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "router-gateway-"));
    ledger = new FakeLedger();
    ledgerAddr = await ledger.start();
    if (!existsSync(CONSOLE_MAIN)) throw new Error(`${CONSOLE_MAIN} is missing: build first (npx tsc -b services/console)`);
    const [httpPort, grpcPort] = [await freePort(), await freePort()];
    consoleHttpUrl = `http://127.0.0.1:${httpPort}`;
    consoleGrpcAddr = `127.0.0.1:${grpcPort}`;
    consoleProcess = await startNodeProcess(
      "console",
      CONSOLE_MAIN,
      {
        CONSOLE_HTTP_PORT: String(httpPort),
        CONSOLE_GRPC_PORT: String(grpcPort),
        ROUTER_DATA_DIR: join(dataDir, "console"),
        LEDGER_GRPC_ADDR: ledgerAddr,
        LOG_LEVEL: "info",
        ...secrets,
      },
      () => httpReady(`${consoleHttpUrl}/health`),
      60_000,
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await consoleProcess?.stop();
    await ledger.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("authenticates from the console's keys, forwards management to it, and stops cleanly", async () => {
    const first = await start();
    // The console creates the operator organisation on its first embedded start, and prints its key once.
    const printed = /rt-mgmt-[0-9A-Za-z]{43}/.exec(consoleProcess?.output() ?? "");
    expect(printed).not.toBeNull();
    expect(first.process.output()).not.toMatch(/rt-mgmt-/);
    const operatorKey = printed?.[0] ?? "";
    expect(first.process.output()).toContain("gateway.embedded_defaults");

    const created = await call(first.url, "POST", "/v1/keys", { key: operatorKey, body: { name: "k", limit: 2.5, limit_reset: "daily" } });
    expect(created.status).toBe(201);
    const hash = created.body.data.hash as string;
    ledger.used.set(hash, 500_000_000n);
    const listed = await call(first.url, "GET", "/v1/keys", { key: operatorKey });
    expect(listed.body.data.find((k: { hash: string }) => k.hash === hash)).toMatchObject({ usage: 0.5, limit_remaining: 2 });
    const patched = await call(first.url, "PATCH", `/v1/keys/${hash}`, { key: operatorKey, body: { paused: true, limit: null } });
    expect(patched.body.data).toMatchObject({ paused: true, paused_reason: "manual", limit: null });
    expect((await call(first.url, "DELETE", `/v1/keys/${hash}`, { key: operatorKey })).status).toBe(200);
    expect((await call(first.url, "GET", "/v1/key", { key: created.body.data.key })).status).toBe(401);

    const added = await call(first.url, "POST", "/v1/provider-keys", {
      key: operatorKey,
      body: { provider: "openai", api_key: "sk-embedded-0123456789", model_filter: { deny: ["openai/o1"] } },
    });
    // Provider credentials are the console's; the key is in no log line of either process.
    expect(added.status).toBe(201);
    expect(first.process.output()).not.toContain("sk-embedded-0123456789");
    expect(consoleProcess?.output()).not.toContain("sk-embedded-0123456789");
    const scraped = await fetch(first.metricsUrl);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toMatch(/gateway_http_requests_total\{route="\/v1\/keys",method="POST",status="201"/);

    await first.process.stop();
    expect(first.process.child.exitCode).toBe(0);

    const second = await start();
    expect(second.process.output()).not.toMatch(/rt-mgmt-/);
    expect((await call(second.url, "GET", "/v1/keys?include_disabled=true", { key: operatorKey })).body.data).toHaveLength(2);
  }, 120_000);
});
