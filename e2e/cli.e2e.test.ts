import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
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
    expect(rows.map((r) => r.schema)).toEqual(["gateway", "routing", "ledger", "activity", "runaway"]);
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
});
