import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createTestDatabase, freePort, httpReady, newIdentityKeys, startNodeProcess, type TestDatabase } from "@router/testkit";

const root = join(__dirname, "..");
const CLI = join(root, "services", "cli", "dist", "main.js");
const GATEWAY = join(root, "services", "gateway", "dist", "main.js");
const CONSOLE = join(root, "services", "console", "dist", "main.js");
const run = promisify(execFile);

/**
 * Production bootstrap on an empty Postgres database: the console, which owns organisations, never
 * creates or logs a key, and the bootstrap step (the router-bootstrap Job's command) hands the
 * operator's key over in a file, once, with only ids in its output.
 */
describe("bootstrap in production", () => {
  let db: TestDatabase;
  let dir: string;
  let env: Record<string, string>;
  const identity = newIdentityKeys();
  beforeAll(async () => {
    db = await createTestDatabase("bootstrap");
    dir = await mkdtemp(join(tmpdir(), "router-bootstrap-"));
    env = {
      PATH: process.env.PATH ?? "",
      DATABASE_URL: db.url,
      ROUTER_KEY_PEPPER: randomBytes(32).toString("hex"),
      ROUTER_INTERNAL_SECRET: randomBytes(32).toString("hex"),
      ROUTER_MASTER_KEY: randomBytes(32).toString("hex"),
      ROUTER_DATA_DIR: join(dir, "data"),
      LOG_LEVEL: "info",
    };
  });
  afterAll(async () => {
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });

  /** The console, and the gateway in front of it. */
  const startStack = async () => {
    const [port, consoleHttp, consoleGrpc] = [await freePort(), await freePort(), await freePort()];
    const consoleEnv = { ...env, CONSOLE_HTTP_PORT: String(consoleHttp), CONSOLE_GRPC_PORT: String(consoleGrpc), ROUTER_IDENTITY_PUBLIC_KEYS: identity.env.ROUTER_IDENTITY_PUBLIC_KEYS };
    const consoleSvc = await startNodeProcess("console", CONSOLE, consoleEnv, () => httpReady(`http://127.0.0.1:${consoleHttp}/health`));
    const url = `http://127.0.0.1:${port}`;
    const gatewayEnv = {
      ...env,
      PORT: String(port),
      GATEWAY_METRICS_PORT: "0",
      ROUTER_IDENTITY_SIGNING_KEY: identity.env.ROUTER_IDENTITY_SIGNING_KEY,
      CONSOLE_HTTP_URL: `http://127.0.0.1:${consoleHttp}`,
      CONSOLE_GRPC_ADDR: `127.0.0.1:${consoleGrpc}`,
    };
    const gateway = await startNodeProcess("gateway", GATEWAY, gatewayEnv, () => httpReady(`${url}/livez`)).catch(async (err: unknown) => {
      await consoleSvc.stop();
      throw err;
    });
    return {
      url,
      console: consoleSvc,
      gateway,
      async stop() {
        await gateway.stop();
        await consoleSvc.stop();
      },
    };
  };

  it("starts on an empty database without creating or logging a key, the console saying what to run", async () => {
    const stack = await startStack();
    await stack.stop();
    expect(stack.console.output()).toContain("console.operator_organisation_missing");
    for (const out of [stack.console.output(), stack.gateway.output()]) {
      expect(out).not.toMatch(/rt-mgmt-/);
      expect(out).not.toMatch(/management key/i);
    }
  });

  it("creates the operator organisation once, its key only in the file, then has nothing to do", async () => {
    const keyFile = join(dir, "operator.json");
    const args = [CLI, "org", "create", "--name", "Operators", "--operator", "--if-missing", "--key-file", keyFile];
    const first = await run(process.execPath, args, { env });
    expect(`${first.stdout}${first.stderr}`).not.toMatch(/rt-mgmt-/);
    const created = JSON.parse(first.stdout.trim()) as Record<string, unknown>;
    expect(created).toMatchObject({ org_id: expect.stringMatching(/^org_/), created: true, key_file: keyFile });
    const handed = JSON.parse(await readFile(keyFile, "utf8")) as Record<string, unknown>;
    expect(handed).toMatchObject({ org_id: created.org_id, management_key: expect.stringMatching(/^rt-mgmt-/) });
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);

    // The key works: the gateway accepts it (and the console no longer asks for an operator).
    const stack = await startStack();
    try {
      const res = await fetch(`${stack.url}/v1/keys`, { headers: { authorization: `Bearer ${String(handed.management_key)}` } });
      expect(res.status).toBe(200);
    } finally {
      await stack.stop();
    }
    expect(stack.console.output()).not.toContain("console.operator_organisation_missing");

    const again = await run(process.execPath, args, { env });
    expect(JSON.parse(again.stdout.trim())).toEqual({ operator_organisation: "exists", created: false });
    // The file from the first run is untouched (never overwritten).
    expect(JSON.parse(await readFile(keyFile, "utf8"))).toEqual(handed);
  });

  it("refuses --key-secret outside a Kubernetes pod before creating anything", async () => {
    const failed = run(process.execPath, [CLI, "org", "create", "--name", "Other", "--key-secret", "router-operator-key"], { env });
    await expect(failed).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining("KUBERNETES_SERVICE_HOST") });
    const list = await run(process.execPath, [CLI, "org", "list"], { env });
    expect(list.stdout).not.toContain('"Other"');
  });
});
