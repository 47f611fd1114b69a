import { randomBytes } from "node:crypto";
import { Client } from "pg";

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** The local Postgres that tests use (trust auth); override with TEST_POSTGRES_URL. */
export const TEST_POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** Creates a fresh, empty database on the local Postgres so test files never share state. */
export async function createTestDatabase(label = "t"): Promise<TestDatabase> {
  const name = `rt_${label.replace(/[^a-z0-9]/g, "").slice(0, 20)}_${randomBytes(5).toString("hex")}`;
  const admin = new Client({ connectionString: TEST_POSTGRES_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new Client({ connectionString: TEST_POSTGRES_ADMIN_URL });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * Drops login roles a test created (cluster-wide, unlike its database): after the databases they
 * were granted in are dropped, nothing depends on them.
 */
export async function dropRoles(roles: string[]): Promise<void> {
  const admin = new Client({ connectionString: TEST_POSTGRES_ADMIN_URL });
  await admin.connect();
  try {
    for (const role of roles) await admin.query(`DROP ROLE IF EXISTS ${admin.escapeIdentifier(role)}`);
  } finally {
    await admin.end();
  }
}

/** A unique prefix for Redis keys and stream names so parallel test files never collide. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(6).toString("hex")}`;
}
