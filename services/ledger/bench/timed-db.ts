import type { Db, Queryable } from "@router/db";

const elapsedMs = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

/**
 * The ledger's Db for a benchmark, timing each statement (milliseconds, pool wait included) by the
 * function it calls, or its first words; a transaction counts once, whole.
 */
export function timedDb(db: Db): { db: Db; samples: Map<string, number[]> } {
  const samples = new Map<string, number[]>();
  const record = (label: string, start: bigint) => {
    const list = samples.get(label) ?? [];
    list.push(elapsedMs(start));
    samples.set(label, list);
  };
  const labelOf = (sql: string) =>
    /FROM\s+(\w+)\(/.exec(sql)?.[1] ?? sql.trim().split(/\s+/).slice(0, 3).join(" ").slice(0, 22);
  const timed: Db = {
    schema: db.schema,
    engine: db.engine,
    close: () => db.close(),
    async query<R>(sql: string, params?: unknown[], opts?: { prepare?: boolean }) {
      const start = process.hrtime.bigint();
      try {
        return await db.query<R>(sql, params, opts);
      } finally {
        record(labelOf(sql), start);
      }
    },
    async tx<T>(fn: (q: Queryable) => Promise<T>) {
      const start = process.hrtime.bigint();
      try {
        return await db.tx(fn);
      } finally {
        record("transaction", start);
      }
    },
  };
  return { db: timed, samples };
}
