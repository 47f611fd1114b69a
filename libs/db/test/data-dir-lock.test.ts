import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { DataDirInUseError } from "../src";
import { lockDataDir } from "../src/data-dir-lock";

// PGlite itself cannot load under jest (it needs ES module dynamic imports); the e2e tests of
// `npm start` and the CLI exercise the lock through EmbeddedPostgres.open in real processes.

describe("one process per embedded data directory", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "router-lock-"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("refuses a second owner naming the first, and lets it in once the first released", async () => {
    const dir = join(root, "pg");
    mkdirSync(dir, { recursive: true });
    const release = await lockDataDir(dir);
    const refused = await lockDataDir(dir).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(DataDirInUseError);
    expect((refused as DataDirInUseError).owner?.pid).toBe(process.pid);
    expect((refused as Error).message).toMatch(/in use by process \d+/);
    expect((refused as Error).message).toContain("DATABASE_URL");
    await release();
    const again = await lockDataDir(dir);
    await again();
  });

  it("takes over at once a lock left by a process that died on this host", async () => {
    const dir = join(root, "pg");
    mkdirSync(dir, { recursive: true });
    // What a killed owner leaves: the lock directory and its owner record, with a pid that is gone.
    mkdirSync(`${dir}.lock`);
    writeFileSync(`${dir}.owner.json`, JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname(), command: "router", since: "2026-11-21T10:00:00.000Z" }));
    const release = await lockDataDir(dir);
    await release();
  });

  it("does not take over a lock held by a live process", async () => {
    const dir = join(root, "pg");
    mkdirSync(dir, { recursive: true });
    mkdirSync(`${dir}.lock`);
    writeFileSync(`${dir}.owner.json`, JSON.stringify({ pid: process.ppid, host: hostname(), command: "npm start", since: "2026-11-21T10:00:00.000Z" }));
    await expect(lockDataDir(dir)).rejects.toThrow(/npm start/);
  });
});
