import { createHash } from "node:crypto";
import { Pool, types as pgTypes, type PoolClient } from "pg";
import Cursor from "pg-cursor";
import { assertSchemaName, type Db, type Queryable, type QueryOptions } from "./db";

// int8 (money, counts) comes back as bigint instead of a lossy string or number.
const INT8_OID = 20;
const typeParsers = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID
      ? (v: string) => BigInt(v)
      : (pgTypes.getTypeParser(oid, format) as (v: string) => unknown)) as typeof pgTypes.getTypeParser,
};

export interface PostgresOptions {
  url: string;
  schema: string;
  max?: number;
  /** Name shown in pg_stat_activity. */
  applicationName?: string;
  /** How long an unused connection stays open; default five minutes. */
  idleTimeoutMs?: number;
}

/**
 * pg closes idle connections after 10 s by default. A new connection costs a Postgres backend
 * start and a cold catalog cache (about 20 ms here), paid by whichever request comes next: after a
 * quiet spell, the first key lookup waited for it. Keeping connections for minutes avoids that.
 */
const DEFAULT_IDLE_TIMEOUT_MS = 300_000;

/** A pg pool whose sessions see only this service's schema (then public) on their search_path. */
export function createPostgresDb(opts: PostgresOptions): Db {
  assertSchemaName(opts.schema);
  const pool = new Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    idleTimeoutMillis: opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    application_name: opts.applicationName ?? `router-${opts.schema}`,
    options: `-c search_path=${opts.schema},public`,
    types: typeParsers,
  });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on("error", () => undefined);
  const run = async <R>(client: Pick<PoolClient, "query"> | Pool, sql: string, params?: unknown[], opts?: QueryOptions) => {
    const r = opts?.prepare
      ? await client.query({ name: statementName(sql), text: sql, values: params })
      : await client.query(sql, params as unknown[]);
    return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 };
  };
  return {
    schema: opts.schema,
    engine: "postgres",
    query: (sql, params, opts) => run(pool, sql, params, opts),
    async tx(fn) {
      const client = await pool.connect();
      let broken = false;
      try {
        await client.query("BEGIN");
        const q: Queryable = { query: (sql, params, opts) => run(client, sql, params, opts) };
        const out = await fn(q);
        await client.query("COMMIT");
        return out;
      } catch (err) {
        // The caller's error is the one to report; a connection that cannot roll back is not reused.
        await client.query("ROLLBACK").catch(() => {
          broken = true;
        });
        throw err;
      } finally {
        client.release(broken);
      }
    },
    cursor: <R>(sql: string, params: unknown[], batchSize: number) => cursorBatches<R>(pool, sql, params, batchSize),
    close: () => pool.end(),
  };
}

async function* cursorBatches<R>(pool: Pool, sql: string, params: unknown[], batchSize: number): AsyncGenerator<R[]> {
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError("batchSize must be a whole number of at least 1");
  const client = await pool.connect();
  let broken = false;
  try {
    // The pool's type parsers reach plain queries only; a cursor takes them itself.
    const cursor = client.query(new Cursor<R>(sql, params, { types: typeParsers }));
    try {
      for (;;) {
        const rows = await cursor.read(batchSize);
        if (rows.length === 0) return;
        yield rows;
      }
    } finally {
      // Also reached when the reader stops early (a client that went away): the portal is closed
      // so the connection can be reused; one that cannot close it is dropped instead.
      await cursor.close().catch(() => {
        broken = true;
      });
    }
  } catch (err) {
    broken = true;
    throw err;
  } finally {
    client.release(broken);
  }
}

const statementNames = new Map<string, string>();

/** One name per statement text: pg prepares a name once per connection and refuses a new text under it. */
function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (!name) {
    name = `router_${createHash("sha256").update(sql).digest("hex").slice(0, 24)}`;
    statementNames.set(sql, name);
  }
  return name;
}
