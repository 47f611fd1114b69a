import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Db } from "./db";

export interface MigrationResult {
  /** Versioned migrations applied by this call, in order. */
  applied: string[];
  /** Repeatable files (re)applied by this call because they were new or had changed. */
  repeated: string[];
}

/** Where a service keeps its repeatable files, inside its migrations folder. */
export const REPEATABLE_DIR = "repeatable";

const sqlFiles = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith(".sql"))
        .sort()
    : [];

/**
 * Applies `<dir>/*.sql` in file-name order to the service's own schema, each file once, recorded in
 * `<schema>.schema_migrations`; then each file of `<dir>/repeatable/` (functions, written as
 * `CREATE OR REPLACE`) that is new or changed since it was last applied, recorded with its sha256
 * in `<schema>.schema_repeatables`. Everything runs in one transaction under an advisory lock keyed
 * by the schema, so several replicas may start at once and a failure applies nothing.
 */
export async function migrate(db: Db, dir: string): Promise<MigrationResult> {
  const files = sqlFiles(dir);
  const repeatableDir = join(dir, REPEATABLE_DIR);
  const repeatables = sqlFiles(repeatableDir);
  const lockKey = createHash("sha256").update(`router-migrate:${db.schema}`).digest().readBigInt64BE(0);
  const applied: string[] = [];
  const repeated: string[] = [];
  await db.tx(async (q) => {
    await q.query("SELECT pg_advisory_xact_lock($1)", [lockKey.toString()]);
    await q.query(`CREATE SCHEMA IF NOT EXISTS ${db.schema}`);
    await q.query(
      `CREATE TABLE IF NOT EXISTS ${db.schema}.schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = new Set(
      (await q.query<{ name: string }>(`SELECT name FROM ${db.schema}.schema_migrations`)).rows.map((r) => r.name),
    );
    for (const file of files) {
      if (done.has(file)) continue;
      await q.query(readFileSync(join(dir, file), "utf8"));
      await q.query(`INSERT INTO ${db.schema}.schema_migrations (name) VALUES ($1)`, [file]);
      applied.push(file);
    }
    if (repeatables.length === 0) return;
    await q.query(
      `CREATE TABLE IF NOT EXISTS ${db.schema}.schema_repeatables (name text PRIMARY KEY, sha256 text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const current = new Map(
      (await q.query<{ name: string; sha256: string }>(`SELECT name, sha256 FROM ${db.schema}.schema_repeatables`)).rows.map(
        (r) => [r.name, r.sha256],
      ),
    );
    for (const file of repeatables) {
      const sql = readFileSync(join(repeatableDir, file), "utf8");
      const sha256 = createHash("sha256").update(sql).digest("hex");
      if (current.get(file) === sha256) continue;
      await q.query(sql);
      await q.query(
        `INSERT INTO ${db.schema}.schema_repeatables (name, sha256) VALUES ($1, $2)
         ON CONFLICT (name) DO UPDATE SET sha256 = EXCLUDED.sha256, applied_at = now()`,
        [file, sha256],
      );
      repeated.push(file);
    }
  });
  return { applied, repeated };
}
