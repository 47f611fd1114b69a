import { Pool, types as pgTypes, type PoolClient } from "pg";
import { assertSchemaName, type Db, type Queryable } from "./db";

// int8 (money, counts) comes back as bigint instead of a lossy string or number.
const INT8_OID = 20;
const typeParsers = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID ? (v: string) => BigInt(v) : pgTypes.getTypeParser(oid, format)) as typeof pgTypes.getTypeParser,
};

export interface PostgresOptions {
  url: string;
  schema: string;
  max?: number;
  /** Name shown in pg_stat_activity. */
  applicationName?: string;
}

/** A pg pool whose sessions see only this service's schema (then public) on their search_path. */
export function createPostgresDb(opts: PostgresOptions): Db {
  assertSchemaName(opts.schema);
  const pool = new Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? `router-${opts.schema}`,
    options: `-c search_path=${opts.schema},public`,
    types: typeParsers,
  });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on("error", () => undefined);
  const run = async <R>(client: Pick<PoolClient, "query"> | Pool, sql: string, params?: unknown[]) => {
    const r = await client.query(sql, params as unknown[]);
    return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 };
  };
  return {
    schema: opts.schema,
    engine: "postgres",
    query: (sql, params) => run(pool, sql, params),
    async tx(fn) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const q: Queryable = { query: (sql, params) => run(client, sql, params) };
        const out = await fn(q);
        await client.query("COMMIT");
        return out;
      } catch (err) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}
