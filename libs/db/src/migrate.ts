import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Db } from "./db";

export interface MigrationResult {
  applied: string[];
}

/**
 * Applies `<dir>/*.sql` in file-name order to the service's own schema, each file once, each in its
 * own transaction, recorded in `<schema>.schema_migrations`. An advisory lock keyed by the schema
 * lets several replicas start at once without racing.
 */
export async function migrate(db: Db, dir: string): Promise<MigrationResult> {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort();
  const lockKey = createHash("sha256").update(`router-migrate:${db.schema}`).digest().readBigInt64BE(0);
  const applied: string[] = [];
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
  });
  return { applied };
}
