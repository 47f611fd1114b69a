export interface QueryOptions {
  /**
   * Keeps the statement prepared on each connection, so Postgres parses and plans it once rather
   * than per call. For hot statements with fixed text only: each distinct text stays prepared on
   * every pooled connection. PGlite ignores it.
   */
  prepare?: boolean;
}

export interface TxOptions {
  /**
   * `fn` has no effect outside the transaction (it publishes nothing, calls nothing, changes no
   * state a second run would change again), so it may run again when the connection is lost before
   * COMMIT is sent: Postgres has rolled the first run back. A loss during COMMIT is never retried
   * (the first run may have committed). Without it, only a loss before `fn` starts is retried.
   */
  retryOnConnectionLoss?: boolean;
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
  /**
   * Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. A lost
   * connection rejects with `ConnectionLostError` (see `TxOptions` for when it is retried first).
   */
  tx<T>(fn: (q: Queryable) => Promise<T>, opts?: TxOptions): Promise<T>;
  close(): Promise<void>;
  /** "postgres" or "pglite". */
  readonly engine: "postgres" | "pglite";
  /**
   * Reads one query's rows through a server-side cursor, `batchSize` rows at a time, on a connection
   * of its own (one statement, so one snapshot), for results too large to hold in memory. Stopping
   * the iteration early closes the cursor and returns the connection.
   *
   * Postgres only: PGlite has a single session shared by every service of the process, so a cursor
   * left open while a slow reader drains it would hold everyone else up. Callers page by keyset there.
   */
  cursor?<R = Record<string, unknown>>(sql: string, params: unknown[], batchSize: number): AsyncIterable<R[]>;
}

const SCHEMA_NAME = /^[a-z][a-z0-9_]{0,62}$/;

export function assertSchemaName(schema: string): void {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name: ${schema}`);
}
