import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createPostgresDb,
  ensureServiceRole,
  migrate,
  prepareSchema,
  scramVerifier,
  SchemaNotMigratedError,
  serviceRoleName,
  type Db,
} from "@router/db";
import { createTestDatabase, dropRoles, type TestDatabase } from "@router/testkit";

/** Two services' migrations: gateway-like (a table) and routing-like (a table, a sequence, a function). */
function migrationDirs() {
  const root = mkdtempSync(join(tmpdir(), "roles-"));
  const gateway = join(root, "gateway");
  const routing = join(root, "routing");
  mkdirSync(gateway);
  mkdirSync(join(routing, "repeatable"), { recursive: true });
  writeFileSync(join(gateway, "001_keys.sql"), "CREATE TABLE api_keys (id text PRIMARY KEY, secret text NOT NULL);");
  writeFileSync(join(routing, "001_models.sql"), "CREATE TABLE models (id bigserial PRIMARY KEY, name text NOT NULL);");
  writeFileSync(
    join(routing, "repeatable", "model_count.sql"),
    "CREATE OR REPLACE FUNCTION model_count() RETURNS bigint LANGUAGE sql AS $$ SELECT count(*) FROM models $$;",
  );
  return { gateway, routing };
}

/** Against real Postgres: each service's role reaches its own schema's rows and nothing else. */
describe("per-service roles", () => {
  let tdb: TestDatabase;
  const prefix = `rt${randomBytes(4).toString("hex")}_`;
  const dirs = migrationDirs();
  let migrator: { gateway: Db; routing: Db };
  let asRouting: Db;

  /** The test database's URL with another user (trust auth: no password needed). */
  const urlAs = (role: string) => {
    const url = new URL(tdb.url);
    url.username = role;
    return url.toString();
  };

  beforeAll(async () => {
    tdb = await createTestDatabase("roles");
    migrator = {
      gateway: createPostgresDb({ url: tdb.url, schema: "gateway" }),
      routing: createPostgresDb({ url: tdb.url, schema: "routing" }),
    };
    for (const schema of ["gateway", "routing"] as const) {
      await migrate(migrator[schema], dirs[schema]);
      expect(await ensureServiceRole(migrator[schema], { role: serviceRoleName(schema, prefix), create: true, password: "s3cret-pw" })).toBe("created");
    }
    await migrator.gateway.query("INSERT INTO api_keys (id, secret) VALUES ('k1', 'do-not-read')");
    asRouting = createPostgresDb({ url: urlAs(serviceRoleName("routing", prefix)), schema: "routing" });
  });

  afterAll(async () => {
    await asRouting?.close();
    await migrator?.gateway.close();
    await migrator?.routing.close();
    await tdb.drop();
    // The database (and every grant in it) is gone: the cluster-wide roles can go too.
    await dropRoles(["gateway", "routing"].map((schema) => serviceRoleName(schema, prefix)));
  });

  it("reads and writes its own tables, sequences and functions through unqualified names", async () => {
    await asRouting.query("INSERT INTO models (name) VALUES ('gpt'), ('claude')");
    await asRouting.query("UPDATE models SET name = 'claude-3' WHERE name = 'claude'");
    await asRouting.query("DELETE FROM models WHERE name = 'gpt'");
    expect((await asRouting.query<{ n: bigint }>("SELECT model_count() AS n")).rows).toEqual([{ n: 1n }]);
    expect((await asRouting.query("SELECT name FROM models")).rows).toEqual([{ name: "claude-3" }]);
  });

  it("cannot read another service's schema", async () => {
    await expect(asRouting.query("SELECT secret FROM gateway.api_keys")).rejects.toThrow(/permission denied for schema gateway/);
    // Named through the search path's other entries neither.
    await expect(asRouting.query("SELECT secret FROM api_keys")).rejects.toThrow(/relation "api_keys" does not exist/);
  });

  it("cannot change any schema: no CREATE in its own, none in public, and no writes to the migration records", async () => {
    await expect(asRouting.query("CREATE TABLE routing.sneaky (id int)")).rejects.toThrow(/permission denied for schema routing/);
    await expect(asRouting.query("CREATE TABLE public.sneaky (id int)")).rejects.toThrow(/permission denied for schema public/);
    await expect(asRouting.query("ALTER TABLE models ADD COLUMN x int")).rejects.toThrow(/must be owner of table models/);
    await expect(asRouting.query("DELETE FROM schema_migrations")).rejects.toThrow(/permission denied for table schema_migrations/);
    // It may read them: that is how a service started with ROUTER_MIGRATE_ON_START=false checks its schema.
    await expect(prepareSchema(asRouting, dirs.routing, { migrateOnStart: false })).resolves.toEqual({ applied: [], repeated: [] });
  });

  it("covers a table a later migration creates (default privileges), once the migrator applied it", async () => {
    writeFileSync(join(dirs.routing, "002_presets.sql"), "CREATE TABLE presets (id bigserial PRIMARY KEY, name text NOT NULL);");
    await expect(prepareSchema(asRouting, dirs.routing, { migrateOnStart: false })).rejects.toThrow(
      new SchemaNotMigratedError(
        'schema "routing" is not at the latest migration (not applied: 002_presets.sql): run `router migrate`, then start again (ROUTER_MIGRATE_ON_START=false: services do not change their schema)',
      ),
    );
    // The service's own role cannot apply it.
    await expect(migrate(asRouting, dirs.routing)).rejects.toThrow(/permission denied/);
    await migrate(migrator.routing, dirs.routing);
    await asRouting.query("INSERT INTO presets (name) VALUES ('fast')");
    expect((await asRouting.query("SELECT name FROM presets")).rows).toEqual([{ name: "fast" }]);
  });

  it("is idempotent, reports a missing role without creating it, and stores a SCRAM verifier, never the password", async () => {
    expect(await ensureServiceRole(migrator.routing, { role: serviceRoleName("routing", prefix), create: true })).toBe("granted");
    expect(await ensureServiceRole(migrator.routing, { role: `${prefix}absent`, create: false })).toBe("missing");
    const r = await migrator.routing.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_roles WHERE rolname = $1", [`${prefix}absent`]);
    expect(r.rows).toEqual([{ n: 0 }]);
    const stored = await migrator.routing.query<{ rolpassword: string; rolcreaterole: boolean; rolsuper: boolean }>(
      "SELECT rolpassword, rolcreaterole, rolsuper FROM pg_authid WHERE rolname = $1",
      [serviceRoleName("routing", prefix)],
    );
    expect(stored.rows[0]).toMatchObject({ rolcreaterole: false, rolsuper: false, rolpassword: expect.stringMatching(/^SCRAM-SHA-256\$4096:/) });
    expect(stored.rows[0]?.rolpassword).not.toContain("s3cret-pw");
  });

  it("makes the verifier Postgres itself makes for the same password and salt", async () => {
    const role = `${prefix}scram`;
    await migrator.routing.query("SET password_encryption = 'scram-sha-256'");
    try {
      await migrator.routing.query(`CREATE ROLE ${role} PASSWORD 'correct horse battery staple'`);
      const theirs = (await migrator.routing.query<{ v: string }>("SELECT rolpassword AS v FROM pg_authid WHERE rolname = $1", [role])).rows[0]!.v;
      const salt = Buffer.from(/^SCRAM-SHA-256\$4096:([^$]+)\$/.exec(theirs)![1]!, "base64");
      expect(scramVerifier("correct horse battery staple", salt)).toBe(theirs);
      expect(scramVerifier("correct horse battery stapler", salt)).not.toBe(theirs);
    } finally {
      await migrator.routing.query(`DROP ROLE IF EXISTS ${role}`);
    }
  });

  it("refuses a role name Postgres would need quoting for", () => {
    expect(() => serviceRoleName("gateway", "Router-")).toThrow(/invalid role name/);
  });
});
