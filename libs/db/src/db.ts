export interface QueryOptions {
  /**
   * Keeps the statement prepared on each connection, so Postgres parses and plans it once rather
   * than per call. For hot statements with fixed text only: each distinct text stays prepared on
   * every pooled connection. PGlite ignores it.
   */
  prepare?: boolean;
}

/** The query surface every service's store is written against: real Postgres or embedded PGlite. */
export interface Queryable {
  query<R = Record<string, unknown>>(
    sql: string,
    params?: unknown[],
    opts?: QueryOptions,
  ): Promise<{ rows: R[]; rowCount: number }>;
}

export interface Db extends Queryable {
  /** The Postgres schema this service owns; its tables live there and nowhere else. */
  readonly schema: string;
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** "postgres" or "pglite". */
  readonly engine: "postgres" | "pglite";
}

const SCHEMA_NAME = /^[a-z][a-z0-9_]{0,62}$/;

export function assertSchemaName(schema: string): void {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name: ${schema}`);
}
