import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import lockfile from "proper-lockfile";

/** Another process owns the embedded data directory. */
export class DataDirInUseError extends Error {
  /** Its message says what to do: a process that cannot start prints it without a stack. */
  readonly operatorFacing = true;

  constructor(readonly dir: string, readonly owner: DataDirOwner | null) {
    const who = owner ? `process ${owner.pid} (${owner.command}) since ${owner.since}` : "another process";
    super(
      `the embedded data directory ${dir} is in use by ${who}. One process owns an embedded data ` +
        "directory: stop that process first, or give this one another ROUTER_DATA_DIR, or run against " +
        "Postgres with DATABASE_URL (the CLI then works beside a running server).",
    );
    this.name = "DataDirInUseError";
  }
}

export interface DataDirOwner {
  pid: number;
  host: string;
  command: string;
  since: string;
}

const ownerFile = (dir: string) => `${dir}.owner.json`;

function readOwner(dir: string): DataDirOwner | null {
  try {
    return JSON.parse(readFileSync(ownerFile(dir), "utf8")) as DataDirOwner;
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Takes the embedded data directory for this process (`proper-lockfile`: an atomic lock directory
 * beside it, its mtime refreshed while held, taken over once stale). A lock left by a process that
 * died on this host is taken at once rather than after the staleness delay. Resolves to the release.
 */
export async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  const take = () =>
    lockfile.lock(dir, {
      stale: 10_000,
      update: 2_000,
      realpath: false,
      // A lock this process can no longer refresh (the directory vanished, the disk failed) is said
      // once; the data directory itself is PGlite's to fail on.
      onCompromised: (err) => process.stderr.write(`embedded data directory lock lost: ${err.message}\n`),
    });
  let release: () => Promise<void>;
  try {
    release = await take();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ELOCKED") throw err;
    const owner = readOwner(dir);
    if (!owner || owner.host !== hostname() || isAlive(owner.pid)) throw new DataDirInUseError(dir, owner);
    // proper-lockfile only unlocks what this process holds; the dead owner's lock directory goes by hand.
    rmSync(`${dir}.lock`, { recursive: true, force: true });
    try {
      release = await take();
    } catch {
      throw new DataDirInUseError(dir, readOwner(dir));
    }
  }
  const owner: DataDirOwner = {
    pid: process.pid,
    host: hostname(),
    command: process.argv.slice(1).join(" ").slice(0, 200),
    since: new Date().toISOString(),
  };
  writeFileSync(ownerFile(dir), JSON.stringify(owner));
  return release;
}
