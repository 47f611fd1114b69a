import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { createPostgresDb } from "@router/db";
import { parseIdentityPublicKeys, parseIdentitySigningKey } from "@router/config";
import { identityPublicKeys, identitySigningKey, signIdentity, verifyIdentity, type Identity } from "@router/http-kit";
import { createTestDatabase, dropRoles, freePort, httpReady, newIdentityKeys, startNodeProcess, type TestDatabase } from "@router/testkit";

const SERVICE_SCHEMAS = ["gateway", "console", "routing", "ledger", "activity", "reports", "alerts", "broadcast", "runaway"];

const CLI = join(__dirname, "..", "services", "cli", "dist", "main.js");
/** What `npm run router --` runs: the build check, then the built CLI. */
const LAUNCHER = join(__dirname, "..", "services", "cli", "bin", "router.js");
const BUILD_STAMP = join(__dirname, "..", "node_modules", ".cache", "router-build", "ts.json");
const run = promisify(execFile);
const IDENTITY: Identity = { orgId: "org_cli", credential: "management", keyHash: null, keyName: null, workspaceId: null, role: "owner", userId: null, operator: false };

/** The operator CLI against real Postgres, as an operator runs it. */
describe("the operator CLI", () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  // Roles are cluster-wide: this run's own names, dropped after its database.
  const rolePrefix = `rt${randomBytes(4).toString("hex")}_`;
  const urlAs = (role: string) => {
    const url = new URL(db.url);
    url.username = role;
    return url.toString();
  };
  beforeAll(async () => {
    db = await createTestDatabase("cli");
    env = {
      PATH: process.env.PATH ?? "",
      DATABASE_URL: db.url,
      ROUTER_KEY_PEPPER: "cli-test-pepper",
      LOG_LEVEL: "silent",
      ROUTER_DB_ROLE_PREFIX: rolePrefix,
      ROUTER_DB_PASSWORD_GATEWAY: randomBytes(24).toString("base64url"),
    };
  });
  afterAll(async () => {
    await db.drop();
    await dropRoles(SERVICE_SCHEMAS.map((s) => `${rolePrefix}${s}`));
  });

  const cli = async (...args: string[]) => {
    const { stdout } = await run(process.execPath, [CLI, ...args], { env });
    return stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
  };

  it("imports the bundled catalog and reports what changed, then nothing on a repeat", async () => {
    const [first] = await cli("catalog", "import");
    expect(first).toMatchObject({ file: expect.stringMatching(/catalog\.json$/) });
    expect(Number(first?.modelsChanged)).toBeGreaterThan(20);
    const [again] = await cli("catalog", "import");
    expect(again?.modelsChanged).toBe(0);
  });

  it("prints a new identity key pair, and adds its public key to a given set for a rotation", async () => {
    const first = JSON.parse((await run(process.execPath, [CLI, "keys", "identity"], { env })).stdout) as {
      kid: string;
      signing_key: Record<string, string>;
      public_keys: { keys: Array<Record<string, string>> };
    };
    const signing = parseIdentitySigningKey(JSON.stringify(first.signing_key));
    expect(signing.kid).toBe(first.kid);
    expect(parseIdentityPublicKeys(JSON.stringify(first.public_keys)).keys).toEqual([{ kty: "OKP", crv: "Ed25519", x: signing.x, kid: first.kid }]);
    // What it prints works: its signing key's tokens verify against its public set.
    const token = await signIdentity(IDENTITY, identitySigningKey(signing));
    expect(await verifyIdentity(token, identityPublicKeys(parseIdentityPublicKeys(JSON.stringify(first.public_keys))))).toEqual(IDENTITY);

    const dir = join(__dirname, "..", ".data", `cli-keys-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    try {
      writeFileSync(join(dir, "current.json"), JSON.stringify(first.public_keys));
      const next = JSON.parse((await run(process.execPath, [CLI, "keys", "identity", "--public-keys", join(dir, "current.json")], { env })).stdout) as typeof first;
      expect(next.kid).not.toBe(first.kid);
      expect(next.public_keys.keys.map((k) => k.kid)).toEqual([first.kid, next.kid]);
      // A set holding a private key is refused, naming the option.
      writeFileSync(join(dir, "leaked.json"), JSON.stringify({ keys: [first.signing_key] }));
      await expect(run(process.execPath, [CLI, "keys", "identity", "--public-keys", join(dir, "leaked.json")], { env })).rejects.toMatchObject({
        stderr: expect.stringContaining("--public-keys: holds a private key"),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("applies every service's migrations and grants each service's own role, creating it with --create-roles", async () => {
    // Before any role exists: reported, not created (operators may provision roles themselves).
    const rows = await cli("migrate");
    expect(rows.map((r) => r.schema)).toEqual(SERVICE_SCHEMAS);
    expect(rows.map((r) => r.role_status)).toEqual(Array(9).fill("missing"));
    const withRoles = await cli("migrate", "--create-roles");
    expect(withRoles.map((r) => r.applied)).toEqual(Array(9).fill([]));
    expect(withRoles.map((r) => r.role)).toEqual(SERVICE_SCHEMAS.map((s) => `${rolePrefix}${s}`));
    expect(withRoles.map((r) => r.role_status)).toEqual(Array(9).fill("created"));
    // The password of the one service given one was set; its text is in no output.
    expect(withRoles.filter((r) => r.password_set).map((r) => r.schema)).toEqual(["gateway"]);
    expect(JSON.stringify(withRoles)).not.toContain(env.ROUTER_DB_PASSWORD_GATEWAY);
    expect((await cli("migrate", "--create-roles")).map((r) => r.role_status)).toEqual(Array(9).fill("granted"));
    // What the roles can do is libs/db's test; here: the ledger's role reads its own schema and not the console's.
    const asLedger = createPostgresDb({ url: urlAs(`${rolePrefix}ledger`), schema: "ledger" });
    try {
      await expect(asLedger.query("SELECT count(*) FROM schema_migrations")).resolves.toBeDefined();
      await expect(asLedger.query("SELECT count(*) FROM console.organisations")).rejects.toThrow(/permission denied for schema console/);
    } finally {
      await asLedger.close();
    }
  });

  it("refuses --create-roles on the embedded store, which has no roles", async () => {
    const { DATABASE_URL: _postgres, ...embedded } = env;
    await expect(run(process.execPath, [CLI, "migrate", "--create-roles"], { env: embedded })).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--create-roles: needs DATABASE_URL"),
    });
  });

  it("creates an organisation and prints its management key once", async () => {
    const [org] = await cli("org", "create", "--name", "Ops", "--operator");
    expect(org?.org_id).toMatch(/^org_/);
    expect(org?.management_key).toMatch(/^rt-mgmt-/);
  });

  it("refuses an organisation without a name, saying which flag", async () => {
    await expect(run(process.execPath, [CLI, "org", "create"], { env })).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--name"),
    });
  });

  it("probes a gateway's /health and reports up and down to its API, counted per region and UTC day; a wrong token is refused", async () => {
    // A real gateway takes the reports and forwards them to a real console, which holds the token; in
    // front of the gateway, a /health the test turns up and down.
    const probeToken = randomBytes(32).toString("hex");
    const gatewayPort = await freePort();
    const [consolePort, consoleGrpc] = [await freePort(), await freePort()];
    const identity = newIdentityKeys();
    const masterKey = randomBytes(32).toString("hex");
    const internalSecret = randomBytes(32).toString("hex");
    const consoleSvc = await startNodeProcess(
      "console",
      join(__dirname, "..", "services", "console", "dist", "main.js"),
      {
        ...env,
        ROUTER_PROBE_TOKEN: probeToken,
        ROUTER_MASTER_KEY: masterKey,
        ROUTER_IDENTITY_PUBLIC_KEYS: identity.env.ROUTER_IDENTITY_PUBLIC_KEYS,
        ROUTER_INTERNAL_SECRET: internalSecret,
        CONSOLE_HTTP_PORT: String(consolePort),
        CONSOLE_GRPC_PORT: String(consoleGrpc),
      },
      () => httpReady(`http://127.0.0.1:${consolePort}/health`),
    );
    const gateway = await startNodeProcess(
      "gateway",
      join(__dirname, "..", "services", "gateway", "dist", "main.js"),
      {
        ...env,
        ROUTER_IDENTITY_SIGNING_KEY: identity.env.ROUTER_IDENTITY_SIGNING_KEY,
        ROUTER_INTERNAL_SECRET: internalSecret,
        ROUTER_MASTER_KEY: masterKey,
        ROUTER_DATA_DIR: join(__dirname, "..", ".data", `cli-probe-${process.pid}`),
        CONSOLE_HTTP_URL: `http://127.0.0.1:${consolePort}`,
        CONSOLE_GRPC_ADDR: `127.0.0.1:${consoleGrpc}`,
        PORT: String(gatewayPort),
        GATEWAY_METRICS_PORT: "0",
      },
      () => httpReady(`http://127.0.0.1:${gatewayPort}/health`),
    );
    let healthy = true;
    const server: Server = createServer((req, res) => {
      if (req.url === "/health") {
        res.writeHead(healthy ? 200 : 500, { "content-type": "application/json" });
        res.end(JSON.stringify({ status: healthy ? "ok" : "error" }));
        return;
      }
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        fetch(`http://127.0.0.1:${gatewayPort}${req.url ?? "/"}`, {
          method: req.method,
          headers: { authorization: req.headers.authorization ?? "", "content-type": req.headers["content-type"] ?? "" },
          body: Buffer.concat(chunks),
        }).then(async (r) => {
          res.writeHead(r.status, { "content-type": r.headers.get("content-type") ?? "text/plain" });
          res.end(Buffer.from(await r.arrayBuffer()));
        }, () => res.writeHead(502).end());
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const probe = (token: string, ...args: string[]) =>
        run(process.execPath, [CLI, "probe", "--once", ...args], { env: { PATH: env.PATH ?? "", LOG_LEVEL: "silent", ROUTER_PROBE_TOKEN: token } });
      await probe(probeToken, "--url", url, "--region", "eu-west");
      healthy = false;
      await probe(probeToken, "--url", url, "--region", "eu-west");
      healthy = true;
      await expect(probe(`${probeToken}0`, "--url", url, "--region", "us-east")).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining("the gateway refused the probe token (POST /v1/status/probes answered 401"),
      });
      // Nothing answers there: its result cannot be delivered either, and the probe says so.
      await expect(probe(probeToken, "--url", "http://127.0.0.1:1", "--region", "us-east", "--timeout-ms", "500")).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining("1 result(s) not delivered"),
      });
      const uptime = (await (await fetch(`http://127.0.0.1:${gatewayPort}/v1/status/uptime`)).json()) as { data: { days: Array<{ probes: number }> } };
      expect(uptime.data.days.at(-1)?.probes).toBe(2);
    } finally {
      server.close();
      await gateway.stop();
      await consoleSvc.stop();
      rmSync(join(__dirname, "..", ".data", `cli-probe-${process.pid}`), { recursive: true, force: true });
    }
    const counts = createPostgresDb({ url: db.url, schema: "console" });
    try {
      const rows = await counts.query<{ region: string; probes: number; up: number }>("SELECT region, probes, up FROM uptime_days ORDER BY region");
      expect(rows.rows).toEqual([{ region: "eu-west", probes: 2, up: 1 }]);
    } finally {
      await counts.close();
    }
  });

  it("refuses to probe without ROUTER_PROBE_TOKEN", async () => {
    await expect(run(process.execPath, [CLI, "probe", "--once", "--url", "http://127.0.0.1:1", "--region", "eu"], { env })).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining("ROUTER_PROBE_TOKEN: required"),
    });
  });

  it("declares Kafka topics only with KAFKA_BROKERS and a layout a broker accepts, naming what is wrong", async () => {
    const topics = (extra: Record<string, string>) => run(process.execPath, [CLI, "kafka", "topics", "create"], { env: { ...env, ...extra } });
    await expect(topics({})).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining("KAFKA_BROKERS") });
    await expect(topics({ KAFKA_BROKERS: "127.0.0.1:1", KAFKA_TOPIC_REPLICATION_FACTOR: "1", KAFKA_TOPIC_MIN_INSYNC_REPLICAS: "2" })).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining("KAFKA_TOPIC_MIN_INSYNC_REPLICAS: cannot exceed KAFKA_TOPIC_REPLICATION_FACTOR"),
    });
    await expect(topics({ KAFKA_BROKERS: "127.0.0.1:1" })).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining("no answer from KAFKA_BROKERS=127.0.0.1:1"),
    });
  });

  it.each([
    [["probe", "--region", "eu-west"], "--url"],
    [["probe", "--url", "http://127.0.0.1:1", "--region", "EU West"], "--region"],
    [["probe", "--url", "http://127.0.0.1:1", "--region", "eu", "--interval", "0"], "--interval"],
  ])("refuses %j naming %s", async (args, flag) => {
    await expect(run(process.execPath, [CLI, ...args], { env })).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining(flag) });
  });
});

describe("the operator CLI's help", () => {
  const env = { PATH: process.env.PATH ?? "", LOG_LEVEL: "silent" };
  const help = (...args: string[]) => run(process.execPath, [CLI, ...args], { env });

  it.each([["--help"], ["-h"], ["help"]])("%s prints every command", async (flag) => {
    const { stdout } = await help(flag);
    for (const command of ["org create", "org list", "key create", "catalog import", "migrate", "events tail", "kafka topics create", "probe"]) {
      expect(stdout).toContain(`  ${command} `);
    }
  });

  it.each([
    [["key", "create", "--help"]],
    [["key", "create", "-h"]],
    [["help", "key", "create"]],
    [["help", "key"]],
    [["key", "--help"]],
  ])("%j prints that command's help: its usage and each option", async (args) => {
    const { stdout } = await help(...args);
    expect(stdout).toMatch(/^Usage: npm run router -- key create --org <org_id> \[--name <name>\]\n/);
    expect(stdout).toMatch(/^ {2}--org <org_id> /m);
    expect(stdout).toMatch(/^ {2}--name <name> /m);
    // Only that command's: another command's options are not in it.
    expect(stdout).not.toContain("--operator");
  });

  it("prints the help of every command of a group (org: create and list)", async () => {
    const { stdout } = await help("org", "--help");
    expect(stdout).toContain("Usage: npm run router -- org create --name <name>");
    expect(stdout).toContain("Usage: npm run router -- org list");
    expect(stdout).toMatch(/^ {2}--if-missing /m);
  });

  it("refuses help for an unknown command, naming it, on stderr", async () => {
    await expect(help("help", "orgs")).rejects.toMatchObject({ code: 2, stdout: "", stderr: expect.stringMatching(/^unknown command: orgs\n/) });
  });
});

/**
 * `npm run router` and `npm start` compile only when a source changed since the last build
 * (scripts/build.js): a call on a current build does not start the compiler.
 */
describe("the build before a CLI call", () => {
  const env = { PATH: process.env.PATH ?? "", LOG_LEVEL: "silent" };
  const launch = () => run(process.execPath, [LAUNCHER, "--help"], { env });
  let savedStamp: string | undefined;
  beforeAll(() => {
    try {
      savedStamp = readFileSync(BUILD_STAMP, "utf8");
    } catch {
      savedStamp = undefined;
    }
  });
  afterAll(() => {
    if (savedStamp !== undefined) writeFileSync(BUILD_STAMP, savedStamp);
  });

  it("builds when a source is newer than the last build, then not again", async () => {
    // A stamp older than every source: as after `git pull`, or an edit since the last build.
    mkdirSync(join(BUILD_STAMP, ".."), { recursive: true });
    writeFileSync(BUILD_STAMP, JSON.stringify({ startedAt: 0 }));
    const stale = await launch();
    expect(stale.stderr).toMatch(/^router: building TypeScript \(tsc -b\): \S+ changed\n/);
    expect(stale.stdout).toContain("Router operator CLI");

    const current = await launch();
    expect(current.stderr).toBe("");
    expect(current.stdout).toContain("Router operator CLI");
  }, 120_000);

  it("builds once in a checkout it never built (no stamp), then finds it current", async () => {
    rmSync(BUILD_STAMP, { force: true });
    const first = await launch();
    expect(first.stderr).toMatch(/^router: building TypeScript \(tsc -b\): never built here\n/);
    const check = await run(process.execPath, [join(__dirname, "..", "scripts", "build.js"), "--check", "--only", "ts"], { env });
    expect(check.stdout).toBe("ts: current\n");
  }, 120_000);
});

// Needs a Kafka broker (`make test-kafka`); none runs on the development machines, so skipped there.
const brokers = process.env.KAFKA_BROKERS ?? "";
(brokers ? describe : describe.skip)("the operator CLI on Kafka", () => {
  it("declares every topic and its .dlq once, then finds them on a second run", async () => {
    const namespace = `cli-${Date.now().toString(36)}`;
    const env = { PATH: process.env.PATH ?? "", KAFKA_BROKERS: brokers, ROUTER_BUS_NAMESPACE: namespace, KAFKA_TOPIC_PARTITIONS: "2", KAFKA_TOPIC_REPLICATION_FACTOR: "1" };
    const declare = async () =>
      (await run(process.execPath, [CLI, "kafka", "topics", "create"], { env })).stdout.trim().split("\n").map((l) => JSON.parse(l) as { topic: string; action: string });
    const first = await declare();
    expect(first.map((r) => r.topic).sort()).toEqual(
      ["router.request.completed.v1", "router.spend.threshold_crossed.v1", "router.spend.runaway_flagged.v1"].flatMap((t) => [`${namespace}.${t}`, `${namespace}.${t}.dlq`]).sort(),
    );
    expect(new Set(first.map((r) => r.action))).toEqual(new Set(["created"]));
    expect(new Set((await declare()).map((r) => r.action))).toEqual(new Set(["exists"]));
  });
});
