import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { Client } from "pg";
import {
  createTestDatabase,
  gatewayClient,
  newIdentityKeys,
  startFakeOpenAi,
  startStack,
  waitFor,
  type FakeUpstream,
  type Stack,
  type TestDatabase,
} from "@router/testkit";

const root = join(__dirname, "..");
const SERVICES = ["gateway", "routing", "ledger", "activity", "reports", "alerts", "broadcast", "runaway"];

/** Runs a service's main until it exits (or 20 s pass), returning its exit code and stderr. */
function runUntilExit(service: string, env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, "services", service, "dist", "main.js")], {
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe("a service told not to migrate (ROUTER_MIGRATE_ON_START=false)", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase("nomigrate");
  });
  afterAll(() => db.drop());

  it.each([["routing"], ["gateway"]])("%s refuses to start on an unmigrated schema with one line saying to run router migrate", async (service) => {
    const identity = newIdentityKeys();
    const { code, stderr } = await runUntilExit(service, {
      DATABASE_URL: db.url,
      ROUTER_MIGRATE_ON_START: "false",
      ROUTER_KEY_PEPPER: randomBytes(32).toString("hex"),
      ROUTER_MASTER_KEY: randomBytes(32).toString("hex"),
      ROUTER_INTERNAL_SECRET: randomBytes(32).toString("hex"),
      ...identity.env,
      ROUTER_DATA_DIR: join(root, ".data", `nomigrate-${randomBytes(4).toString("hex")}`),
      PORT: "0",
      GATEWAY_METRICS_PORT: "0",
      ROUTING_HTTP_PORT: "0",
      ROUTING_GRPC_PORT: "0",
      LOG_LEVEL: "silent",
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(
      new RegExp(`^${service} failed to start: schema "${service}" is not at the latest migration \\(not applied: 001_[^)]*\\): run \`router migrate\`, then start again`),
    );
    // One line: the operator's, not a stack trace.
    expect(stderr.trim().split("\n")).toHaveLength(1);
    // And it changed nothing: the schema was not created.
    const admin = new Client({ connectionString: db.url });
    await admin.connect();
    try {
      expect((await admin.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [service])).rowCount).toBe(0);
    } finally {
      await admin.end();
    }
  });
});

/** The separate-process stack runs each service as its own login role, as production does. */
describe("the stack on per-service roles", () => {
  let stack: Stack;
  let openai: FakeUpstream;

  beforeAll(async () => {
    openai = await startFakeOpenAi();
    stack = await startStack({ providerBaseUrls: { openai: openai.url } });
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
    await openai?.close();
  });

  it("connects every service as its own role, and serves a completion that activity records", async () => {
    const database = new URL(stack.env.DATABASE_URL ?? "").pathname.slice(1);
    const admin = new Client({ connectionString: stack.env.DATABASE_URL });
    await admin.connect();
    try {
      const sessions = await admin.query<{ application_name: string; usename: string }>(
        "SELECT DISTINCT application_name, usename FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'router-%' AND application_name <> 'router-cli'",
        [database],
      );
      const byService = new Map(sessions.rows.map((r) => [r.application_name.replace(/^router-/, ""), r.usename]));
      for (const service of SERVICES) expect({ service, role: byService.get(service) }).toEqual({ service, role: expect.stringMatching(new RegExp(`^rt[0-9a-f]{8}_${service}$`)) });

      const org = await stack.createOrg("Roles Co");
      const mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
      expect((await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: "sk-roles-0001" })).status).toBe(201);
      const created = await mgmt.post("/v1/keys", { name: "roles" });
      expect(created.status).toBe(201);
      const client = gatewayClient(stack.gatewayUrl, (created.json.data as { key: string }).key);
      const res = await client.post("/v1/chat/completions", { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
      expect(res.status).toBe(200);
      // Written by the activity service, as its role, from the bus.
      await waitFor(async () => ((await admin.query("SELECT 1 FROM activity.requests LIMIT 1")).rowCount ?? 0) > 0 || undefined, { what: "the request in activity" });
    } finally {
      await admin.end();
    }
  });
});
