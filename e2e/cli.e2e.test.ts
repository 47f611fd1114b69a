import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { createPostgresDb } from "@router/db";
import { createTestDatabase, type TestDatabase } from "@router/testkit";

const CLI = join(__dirname, "..", "services", "cli", "dist", "main.js");
const run = promisify(execFile);

/** The operator CLI against real Postgres, as an operator runs it. */
describe("the operator CLI", () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    db = await createTestDatabase("cli");
    env = { PATH: process.env.PATH ?? "", DATABASE_URL: db.url, ROUTER_KEY_PEPPER: "cli-test-pepper", LOG_LEVEL: "silent" };
  });
  afterAll(() => db.drop());

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

  it("applies every service's migrations", async () => {
    const rows = await cli("migrate");
    expect(rows.map((r) => r.schema)).toEqual(["gateway", "routing", "ledger", "activity", "reports"]);
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

  it("probes a gateway's /health and counts up and down per region and UTC day", async () => {
    let healthy = true;
    const server: Server = createServer((_req, res) => {
      res.writeHead(healthy ? 200 : 500, { "content-type": "application/json" });
      res.end(JSON.stringify({ status: healthy ? "ok" : "error" }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const probe = (...args: string[]) => run(process.execPath, [CLI, "probe", "--once", ...args], { env });
      await probe("--url", url, "--region", "eu-west");
      healthy = false;
      await probe("--url", url, "--region", "eu-west");
      await probe("--url", "http://127.0.0.1:1", "--region", "us-east", "--timeout-ms", "500");
    } finally {
      server.close();
    }
    const gw = createPostgresDb({ url: db.url, schema: "gateway" });
    try {
      const rows = await gw.query<{ region: string; probes: number; up: number }>("SELECT region, probes, up FROM uptime_days ORDER BY region");
      expect(rows.rows).toEqual([
        { region: "eu-west", probes: 2, up: 1 },
        { region: "us-east", probes: 1, up: 0 },
      ]);
    } finally {
      await gw.close();
    }
  });

  it.each([
    [["probe", "--region", "eu-west"], "--url"],
    [["probe", "--url", "http://127.0.0.1:1", "--region", "EU West"], "--region"],
    [["probe", "--url", "http://127.0.0.1:1", "--region", "eu", "--interval", "0"], "--interval"],
  ])("refuses %j naming %s", async (args, flag) => {
    await expect(run(process.execPath, [CLI, ...args], { env })).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining(flag) });
  });
});
