import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Db, Queryable } from "./db";

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
 * Serialises changes to one schema (its migrations, its role's grants) until the transaction ends:
 * several replicas or Jobs may start at once.
 */
export async function lockSchemaChanges(q: Queryable, schema: string): Promise<void> {
  const lockKey = createHash("sha256").update(`router-migrate:${schema}`).digest().readBigInt64BE(0);
  await q.query("SELECT pg_advisory_xact_lock($1)", [lockKey.toString()]);
}

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
  const applied: string[] = [];
  const repeated: string[] = [];
  await db.tx(async (q) => {
    await lockSchemaChanges(q, db.schema);
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

/** What `migrate` would apply: versioned files not yet recorded, repeatable files new or changed. */
export interface PendingMigrations {
  versioned: string[];
  repeatable: string[];
}

/**
 * Reads, without changing anything, which of `dir`'s migrations the schema lacks. Needs only SELECT
 * on the schema's bookkeeping tables, so a service's own role can ask.
 */
export async function pendingMigrations(db: Db, dir: string): Promise<PendingMigrations> {
  const files = sqlFiles(dir);
  const repeatableDir = join(dir, REPEATABLE_DIR);
  const repeatables = sqlFiles(repeatableDir);
  const present = async (table: string) =>
    (await db.query<{ present: boolean }>("SELECT to_regclass($1) IS NOT NULL AS present", [`${db.schema}.${table}`])).rows[0]?.present === true;
  const done = (await present("schema_migrations"))
    ? new Set((await db.query<{ name: string }>(`SELECT name FROM ${db.schema}.schema_migrations`)).rows.map((r) => r.name))
    : new Set<string>();
  const current =
    repeatables.length > 0 && (await present("schema_repeatables"))
      ? new Map(
          (await db.query<{ name: string; sha256: string }>(`SELECT name, sha256 FROM ${db.schema}.schema_repeatables`)).rows.map((r) => [r.name, r.sha256]),
        )
      : new Map<string, string>();
  return {
    versioned: files.filter((f) => !done.has(f)),
    repeatable: repeatables.filter(
      (f) => current.get(f) !== createHash("sha256").update(readFileSync(join(repeatableDir, f), "utf8")).digest("hex"),
    ),
  };
}

/** A service told not to migrate found its schema behind its code (or unreadable): one line for the operator. */
export class SchemaNotMigratedError extends Error {
  readonly operatorFacing = true;
}

/**
 * At a service's start: applies its migrations when `migrateOnStart` (development, `npm start`),
 * otherwise only checks that the schema is at the latest one and refuses with `SchemaNotMigratedError`
 * when not. A service running as its own role has no DDL rights: `router migrate` does this step.
 */
export async function prepareSchema(db: Db, dir: string, opts: { migrateOnStart: boolean }): Promise<MigrationResult> {
  if (opts.migrateOnStart) return migrate(db, dir);
  let pending: PendingMigrations;
  try {
    pending = await pendingMigrations(db, dir);
  } catch (err) {
    throw new SchemaNotMigratedError(
      `cannot read schema "${db.schema}"'s migrations (${err instanceof Error ? err.message : String(err)}): run \`router migrate\` (it also grants this service's role), then start again`,
    );
  }
  const missing = [...pending.versioned, ...pending.repeatable.map((f) => `${REPEATABLE_DIR}/${f}`)];
  if (missing.length > 0) {
    throw new SchemaNotMigratedError(
      `schema "${db.schema}" is not at the latest migration (not applied: ${missing.join(", ")}): run \`router migrate\`, then start again (ROUTER_MIGRATE_ON_START=false: services do not change their schema)`,
    );
  }
  return { applied: [], repeated: [] };
}
