import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { isNewEmbeddedStore } from "@router/db";
import { NewStoreError, prepareNewStore } from "../src/new-store";

const SCHEMAS = ["activity", "alerts", "broadcast", "gateway", "ledger", "reports", "routing", "runaway"];
// PGlite cannot start inside jest's module sandbox: the store is opened by plain Node processes.
const DB = JSON.stringify(require.resolve("../../../libs/db/dist/index.js"));

/** Opens the store as the server would (taking its lock) and prints the number of tables of each schema. */
async function tablesBySchema(pgDir: string): Promise<Record<string, number>> {
  const script = `const { EmbeddedPostgres } = require(${DB});
(async () => {
  const store = await EmbeddedPostgres.open(${JSON.stringify(pgDir)});
  const r = await store.forSchema("public").query(
    "SELECT table_schema AS schema, count(*)::int AS n FROM information_schema.tables GROUP BY table_schema");
  process.stdout.write(JSON.stringify(Object.fromEntries(r.rows.map((row) => [row.schema, row.n]))));
  await store.close();
})().catch((err) => { console.error(err.message); process.exit(1); });`;
  const { stdout } = await promisify(execFile)(process.execPath, ["-e", script]);
  return JSON.parse(stdout) as Record<string, number>;
}

/** A process that opens the store and keeps it (and its lock) until killed. */
async function holdStore(pgDir: string): Promise<ChildProcess> {
  const script = `const { EmbeddedPostgres } = require(${DB});
EmbeddedPostgres.open(${JSON.stringify(pgDir)}).then(() => process.stdout.write("held\\n"), (err) => { console.error(err.message); process.exit(1); });
setInterval(() => undefined, 1000);`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (d: Buffer) => d.toString().includes("held") && resolve());
    child.once("exit", (code) => reject(new Error(`the holder exited with ${code}`)));
  });
  return child;
}

/**
 * The first start's store, created and migrated by a child process (`router migrate`) before the
 * serving process opens it. Needs the CLI and libs/db built (`make test` builds first).
 */
describe("a new embedded store", () => {
  let dataDir: string;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), "router-new-store-"));
  });

  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("is created with every service's tables by a child, which leaves it unlocked", async () => {
    const pgDir = join(dataDir, "pg");
    expect(isNewEmbeddedStore(pgDir)).toBe(true);
    // The embedded store whatever the environment says: DATABASE_URL is not passed on.
    await prepareNewStore(dataDir, { ...process.env, DATABASE_URL: "postgres://never-used.invalid/router" });
    expect(isNewEmbeddedStore(pgDir)).toBe(false);
    // Opened by another process afterwards: the child released the directory when it exited.
    const tables = await tablesBySchema(pgDir);
    expect(SCHEMAS.filter((schema) => !((tables[schema] ?? 0) > 0))).toEqual([]);
  }, 120_000);

  it("fails in the child's own words when another process holds the directory, creating nothing", async () => {
    const pgDir = join(dataDir, "pg");
    const holder = await holdStore(pgDir);
    try {
      const failed = await prepareNewStore(dataDir, process.env).catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(NewStoreError);
      expect((failed as Error).message).toMatch(/^preparing the new embedded store in .*pg failed: .*is in use by process/s);
    } finally {
      await new Promise((resolve) => {
        holder.once("exit", resolve);
        holder.kill("SIGKILL");
      });
    }
    expect((await tablesBySchema(pgDir)).ledger).toBeUndefined();
  }, 120_000);
});
