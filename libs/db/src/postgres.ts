import { createHash } from "node:crypto";
import { Pool, types as pgTypes, type PoolClient } from "pg";
import Cursor from "pg-cursor";
import { setTimeout as delay } from "node:timers/promises";
import { asConnectionLoss, ConnectionLostError } from "./connection-loss";
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
    // A peer that vanished without closing (a network drop) is probed for after 10 s of silence
    // rather than the operating system's two hours, so a dead idle connection is found and replaced.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on("error", () => undefined);
  // Nor a checked-out one. pg-pool takes its own listener off a client it hands out, and hands a new
  // one out from inside the read of its socket: a termination in that same read (a backend killed as
  // it opened) is emitted before the taker can listen. So every client listens from its start; the
  // statement in flight, or the next one, reports the loss to its caller.
  pool.on("connect", (client) => client.on("error", () => undefined));
  return {
    schema: opts.schema,
    engine: "postgres",
    async query(sql, params, opts) {
      try {
        return await run(pool, sql, params, opts);
      } catch (err) {
        // Outside a transaction a statement commits by itself: one lost under it may have.
        throw asConnectionLoss(err, true);
      }
    },
    async tx(fn, txOpts) {
      let retries = 0;
      let startedAgain = false;
      for (;;) {
        const progress = { started: false };
        try {
          return await transaction(pool, fn, progress);
        } catch (err) {
          if (!(err instanceof ConnectionLostError) || err.mayHaveCommitted) throw err;
          // Postgres rolled the lost run back. Lost before `fn` started (a pooled connection that had
          // died), there is nothing to repeat: once more at once. After, only when the caller said so.
          if (!progress.started && !startedAgain) {
            startedAgain = true;
          } else if (txOpts?.retryOnConnectionLoss && retries < RETRY_PAUSES_MS.length) {
            await delay(RETRY_PAUSES_MS[retries++]);
          } else {
            throw err;
          }
        }
      }
    },
    cursor: <R>(sql: string, params: unknown[], batchSize: number) => cursorBatches<R>(pool, sql, params, batchSize),
    close: () => pool.end(),
  };
}

/** Pauses before each retry of a transaction whose connection was lost (`retryOnConnectionLoss`). */
const RETRY_PAUSES_MS = [50, 250];

const run = async <R>(client: Pick<PoolClient, "query"> | Pool, sql: string, params?: unknown[], opts?: QueryOptions) => {
  const r = opts?.prepare
    ? await client.query({ name: statementName(sql), text: sql, values: params })
    : await client.query(sql, params as unknown[]);
  return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 };
};

/** A checked-out client's state: `lost` once its connection went, `discard` when it must not be reused. */
interface Checkout {
  lost: boolean;
  discard: boolean;
}

/**
 * Checks a client out, noting when its connection goes (a terminated backend, a restart), which it
 * may do while no statement runs: the statement in flight, or the next one, rejects, and `release`
 * closes a lost or discarded client rather than giving it back to the pool.
 */
async function checkOut(pool: Pool): Promise<{ client: PoolClient; checkout: Checkout; release: () => void }> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    // Nothing was sent on a connection that did not open.
    throw asConnectionLoss(err, false);
  }
  const checkout: Checkout = { lost: false, discard: false };
  const onError = () => {
    checkout.lost = true;
  };
  client.on("error", onError);
  return {
    client,
    checkout,
    release: () => {
      const lost = checkout.lost;
      client.release(lost || checkout.discard);
      // A lost client keeps the listener: it may still report the socket's close after the release.
      if (!lost) client.removeListener("error", onError);
    },
  };
}

async function transaction<T>(pool: Pool, fn: (q: Queryable) => Promise<T>, progress: { started: boolean }): Promise<T> {
  const { client, checkout, release } = await checkOut(pool);
  let committing = false;
  try {
    await client.query("BEGIN");
    progress.started = true;
    const q: Queryable = { query: (sql, params, opts) => run(client, sql, params, opts) };
    const out = await fn(q);
    committing = true;
    await client.query("COMMIT");
    return out;
  } catch (err) {
    // The caller's error is the one to report; a connection that cannot roll back is not reused.
    if (!checkout.lost) {
      await client.query("ROLLBACK").catch(() => {
        checkout.discard = true;
      });
    }
    // A loss reported by a statement `fn` ran outside this transaction (through the pool) stays as it came.
    throw asConnectionLoss(err, committing);
  } finally {
    release();
  }
}

async function* cursorBatches<R>(pool: Pool, sql: string, params: unknown[], batchSize: number): AsyncGenerator<R[]> {
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError("batchSize must be a whole number of at least 1");
  const { client, checkout, release } = await checkOut(pool);
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
      if (!checkout.lost) {
        await cursor.close().catch(() => {
          checkout.discard = true;
        });
      }
    }
  } catch (err) {
    checkout.discard = true;
    throw asConnectionLoss(err, true);
  } finally {
    release();
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
