import { execFile } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { lockDataDir } from "./data-dir-lock";
import { assertSchemaName, type Db, type Queryable } from "./db";
import { PgliteThread, type PgliteSession } from "./pglite-thread";

/**
 * Postgres's buffer cache inside PGlite's WASM memory. The default (128 MB) is sized for a server;
 * the one-process default holds a small team's data, and the operating system caches the files
 * anyway: 32 MB keeps about 110 MB less resident for as long as the process runs.
 */
const SHARED_BUFFERS = "shared_buffers=32MB";

/** Whether `dataDir` holds no embedded store yet (opening it would create one). */
export function isNewEmbeddedStore(dataDir: string): boolean {
  return !existsSync(join(dataDir, "PG_VERSION"));
}

/**
 * Embedded Postgres (PGlite, WASM, on its own thread) for the one-process default. One instance is
 * shared by every service's schema; PGlite has a single session, so every statement and transaction
 * is serialised here and the search_path is switched to the caller's schema before it runs.
 */
export class EmbeddedPostgres {
  private readonly pg: PgliteSession;
  private chain: Promise<unknown> = Promise.resolve();
  private currentSchema = "";

  private constructor(
    pg: PgliteSession,
    private readonly unlock: () => Promise<void>,
  ) {
    this.pg = pg;
  }

  /**
   * Opens (or creates) the store in `dataDir`, or in memory for null. A directory is owned by one
   * process (PGlite does not guard its files, and two writers corrupt them): a second opener is
   * refused with `DataDirInUseError` naming the owner.
   */
  static async open(dataDir: string | null): Promise<EmbeddedPostgres> {
    let unlock = async () => undefined as void;
    if (dataDir) {
      mkdirSync(dataDir, { recursive: true });
      unlock = await lockDataDir(dataDir);
    }
    try {
      if (dataDir && isNewEmbeddedStore(dataDir)) await initialiseApart(dataDir);
      const pg = await PgliteThread.open({ dataDir, postgresqlconf: [SHARED_BUFFERS] });
      return new EmbeddedPostgres(pg, unlock);
    } catch (err) {
      await unlock();
      throw err;
    }
  }

  private serialise<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    // Each caller gets its own outcome from `next`; the chain only orders the calls, so a failure
    // must not stop the ones queued after it.
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async useSchema(schema: string): Promise<void> {
    if (this.currentSchema === schema) return;
    await this.pg.exec(`SET search_path TO ${schema}, public`);
    this.currentSchema = schema;
  }

  /** A Db view of this instance for one service's schema. */
  forSchema(schema: string): Db {
    assertSchemaName(schema);
    const run = async <R>(sql: string, params?: unknown[]) => {
      if (!params || params.length === 0) {
        // exec speaks the simple protocol, so a migration file with many statements runs as one.
        const results = await this.pg.exec(sql);
        const last = results[results.length - 1];
        return { rows: (last?.rows ?? []) as R[], rowCount: last?.affectedRows ?? last?.rows.length ?? 0 };
      }
      const r = await this.pg.query<R>(sql, params);
      return { rows: r.rows, rowCount: r.affectedRows ?? r.rows.length };
    };
    const q: Queryable = { query: (sql, params) => run(sql, params) };
    return {
      schema,
      engine: "pglite",
      query: (sql, params) =>
        this.serialise(async () => {
          await this.useSchema(schema);
          return run(sql, params);
        }),
      // In-process, a session cannot lose its connection: `retryOnConnectionLoss` has nothing to retry.
      tx: (fn) =>
        this.serialise(async () => {
          await this.useSchema(schema);
          await this.pg.exec("BEGIN");
          try {
            const out = await fn(q);
            await this.pg.exec("COMMIT");
            return out;
          } catch (err) {
            // The caller's error is the one to report; a failed ROLLBACK leaves nothing else to undo.
            await this.pg.exec("ROLLBACK").catch(() => undefined);
            throw err;
          }
        }),
      // The shared instance outlives each service's view; close() on the instance ends it.
      close: async () => undefined,
    };
  }

  async close(): Promise<void> {
    await this.serialise(() => this.pg.close());
    await this.unlock();
  }
}

/**
 * Creates a new data directory in a short-lived child process. Creating one (initdb) grows PGlite's
 * WASM memory to about 750 MB, and WASM memory never shrinks: done in the serving process, the first
 * start would keep that for its whole life, against about 280 MB when it opens an existing directory.
 * The caller holds the directory's lock throughout.
 */
async function initialiseApart(dataDir: string): Promise<void> {
  const pglite = require.resolve("@electric-sql/pglite");
  const script = `const { PGlite } = require(${JSON.stringify(pglite)});
(async () => { const pg = new PGlite(${JSON.stringify(dataDir)}); await pg.waitReady; await pg.close(); })()
  .catch((err) => { console.error(err); process.exit(1); });`;
  await promisify(execFile)(process.execPath, ["-e", script], { timeout: 120_000 });
}
