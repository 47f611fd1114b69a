import { createHash, createHmac, pbkdf2Sync, randomBytes } from "node:crypto";
import { escapeIdentifier, escapeLiteral } from "pg";
import { assertSchemaName, type Db } from "./db";
import { lockSchemaChanges } from "./migrate";

const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The login role a service connects as in production: `<prefix><schema>`, `router_gateway` by default. */
export function serviceRoleName(schema: string, prefix = "router_"): string {
  assertSchemaName(schema);
  const role = `${prefix}${schema}`;
  if (!ROLE_NAME.test(role)) throw new Error(`invalid role name: ${role} (lower-case letters, digits and _, at most 63)`);
  return role;
}

/** The bookkeeping `migrate` keeps: a service reads it (to check it is migrated) but never writes it. */
const BOOKKEEPING_TABLES = ["schema_migrations", "schema_repeatables"];

export interface ServiceRoleOptions {
  role: string;
  /** Creates the role (LOGIN, nothing else) when it does not exist; otherwise a missing role is reported. */
  create: boolean;
  /** Sets the role's password (on creation, or a rotation); unset leaves an existing password as it is. */
  password?: string;
}

/** What `ensureServiceRole` did: granted an existing role, created and granted one, or found none. */
export type ServiceRoleOutcome = "created" | "granted" | "missing";

/**
 * Gives a service's login role exactly what serving needs in its own schema, run as the schema's
 * owner (the migrator) after `migrate`: USAGE on the schema, SELECT/INSERT/UPDATE/DELETE on its
 * tables, USAGE/SELECT on its sequences, EXECUTE on its functions, for what exists now and (default
 * privileges) for what later migrations create. No CREATE: the role cannot change the schema, and
 * it is granted nothing in any other schema. Idempotent; Postgres only (PGlite has no roles).
 */
export async function ensureServiceRole(db: Db, opts: ServiceRoleOptions): Promise<ServiceRoleOutcome> {
  if (db.engine !== "postgres") throw new Error("service roles need Postgres: the embedded PGlite store has no roles");
  if (!ROLE_NAME.test(opts.role)) throw new Error(`invalid role name: ${opts.role}`);
  const schema = db.schema;
  const role = escapeIdentifier(opts.role);
  let outcome: ServiceRoleOutcome = "granted";
  if (!(await roleExists(db, opts.role))) {
    if (!opts.create) return "missing";
    try {
      await db.query(`CREATE ROLE ${role} LOGIN`);
      outcome = "created";
    } catch (err) {
      // Roles are cluster-wide: another database's migrator may have created it a moment ago.
      const code = (err as { code?: string }).code;
      if (code !== "42710" && code !== "23505") throw err;
    }
  }
  if (opts.password !== undefined) {
    // A SCRAM verifier, not the password: the clear text never reaches the server's statement log.
    await db.query(`ALTER ROLE ${role} PASSWORD ${escapeLiteral(scramVerifier(opts.password))}`);
  }
  await db.tx(async (q) => {
    await lockSchemaChanges(q, schema);
    const statements = [
      `GRANT USAGE ON SCHEMA ${schema} TO ${role}`,
      `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${role}`,
      `GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${schema} TO ${role}`,
      `GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${schema} TO ${role}`,
      `ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${role}`,
      `ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} GRANT USAGE, SELECT ON SEQUENCES TO ${role}`,
      `ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} GRANT EXECUTE ON FUNCTIONS TO ${role}`,
      // Postgres before 15 let everyone create in public, where an unqualified name could then be
      // shadowed; 15 and later already refuse it (then this changes nothing).
      "REVOKE CREATE ON SCHEMA public FROM PUBLIC",
    ];
    for (const sql of statements) await q.query(sql);
    for (const table of BOOKKEEPING_TABLES) {
      const present = (await q.query<{ present: boolean }>("SELECT to_regclass($1) IS NOT NULL AS present", [`${schema}.${table}`])).rows[0]?.present;
      if (present) await q.query(`REVOKE INSERT, UPDATE, DELETE ON ${schema}.${table} FROM ${role}`);
    }
  });
  return outcome;
}

async function roleExists(db: Db, role: string): Promise<boolean> {
  return (await db.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [role])).rowCount > 0;
}

/**
 * The SCRAM-SHA-256 verifier Postgres stores for a password (RFC 5802, 4096 iterations, as libpq's
 * PQencryptPasswordConn makes it). Postgres normalises a password with SASLprep, which leaves
 * printable ASCII as it is; the configuration accepts only that.
 */
export function scramVerifier(password: string, salt: Buffer = randomBytes(16)): string {
  const iterations = 4096;
  const salted = pbkdf2Sync(password, salt, iterations, 32, "sha256");
  const clientKey = createHmac("sha256", salted).update("Client Key").digest();
  const storedKey = createHash("sha256").update(clientKey).digest();
  const serverKey = createHmac("sha256", salted).update("Server Key").digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString("base64")}$${storedKey.toString("base64")}:${serverKey.toString("base64")}`;
}
