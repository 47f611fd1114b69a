import { Client } from "pg";
import { ConnectionLostError, createPostgresDb, type Db, type Queryable } from "@router/db";
import { createTestDatabase, TcpProxy, type TestDatabase } from "@router/testkit";

/**
 * A backend terminated under a service (pg_terminate_backend, as a failover or an operator does):
 * the caller gets an error it can handle, never an uncaught exception, and the pool goes on.
 */
describe("a database connection lost under a statement or a transaction, on real Postgres", () => {
  let tdb: TestDatabase;
  let db: Db;
  let admin: Client;
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => void uncaught.push(err);

  beforeAll(async () => {
    tdb = await createTestDatabase("dbloss");
    admin = new Client({ connectionString: tdb.url });
    await admin.connect();
    // Two connections: the pool must replace the ones it loses, and never hand out a dead one.
    db = createPostgresDb({ url: tdb.url, schema: "svc_loss", max: 2 });
    await db.query("CREATE SCHEMA IF NOT EXISTS svc_loss");
    await db.query("CREATE TABLE svc_loss.entries (id text PRIMARY KEY, attempt integer NOT NULL)");
    // Fires at COMMIT and waits there, so a test can lose the connection while COMMIT is on its way.
    await db.query(`CREATE FUNCTION svc_loss.slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.id LIKE 'slow%' THEN PERFORM pg_sleep(2); END IF; RETURN NULL; END $$`);
    await db.query(`CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON svc_loss.entries
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION svc_loss.slow_commit()`);
    process.on("uncaughtException", onUncaught);
  });

  afterEach(() => {
    expect(uncaught).toEqual([]);
  });

  afterAll(async () => {
    process.off("uncaughtException", onUncaught);
    await db.close();
    await admin.end();
    await tdb.drop();
  });

  /** Terminates the backend and waits until Postgres no longer lists it. */
  const terminate = async (pid: number) => {
    await admin.query("SELECT pg_terminate_backend($1)", [pid]);
    for (let i = 0; i < 100; i++) {
      const { rows } = await admin.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid]);
      if (rows.length === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    // The termination notice and the socket's close reach the client on the next turns; setImmediate
    // runs after the I/O that a busy loop left waiting when the timer fired.
    await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setImmediate(r));
  };
  const backendPid = async (q: Queryable) => (await q.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
  const entries = async (prefix: string) =>
    (await db.query<{ id: string; attempt: number }>("SELECT id, attempt FROM entries WHERE id LIKE $1 ORDER BY id", [`${prefix}%`])).rows;

  it("rejects the transaction (rolled back, not retried) when the backend is terminated between two statements, and the pool goes on", async () => {
    let runs = 0;
    const lost = db.tx(async (q) => {
      runs++;
      await q.query("INSERT INTO entries (id, attempt) VALUES ('between-1', $1)", [runs]);
      await terminate(await backendPid(q));
      await q.query("INSERT INTO entries (id, attempt) VALUES ('between-2', $1)", [runs]);
    });

    const err: unknown = await lost.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionLostError);
    expect(err).toMatchObject({ code: "unavailable", status: 503, mayHaveCommitted: false });
    expect(runs).toBe(1);
    expect(await entries("between")).toEqual([]);
    // Both pooled connections serve again, one of them new.
    const answers = await Promise.all([1, 2, 3, 4].map((n) => db.tx(async (q) => (await q.query<{ n: number }>("SELECT $1::int AS n", [n])).rows[0]!.n)));
    expect(answers).toEqual([1, 2, 3, 4]);
  });

  it("runs a transaction again on a new connection when its caller says it may, and it commits once", async () => {
    let runs = 0;
    const committed = await db.tx(
      async (q) => {
        runs++;
        await q.query("INSERT INTO entries (id, attempt) VALUES ('retried-1', $1)", [runs]);
        if (runs === 1) await terminate(await backendPid(q));
        await q.query("INSERT INTO entries (id, attempt) VALUES ('retried-2', $1)", [runs]);
        return runs;
      },
      { retryOnConnectionLoss: true },
    );

    expect(committed).toBe(2);
    expect(await entries("retried")).toEqual([
      { id: "retried-1", attempt: 2 },
      { id: "retried-2", attempt: 2 },
    ]);
  });

  it("gives up after its retries when every run loses its connection", async () => {
    let runs = 0;
    const err: unknown = await db
      .tx(
        async (q) => {
          runs++;
          await terminate(await backendPid(q));
          await q.query("SELECT 1");
        },
        { retryOnConnectionLoss: true },
      )
      .catch((e: unknown) => e);

    expect(err).toMatchObject({ name: "ConnectionLostError", mayHaveCommitted: false });
    expect(runs).toBe(3);
  });

  it("never retries a transaction whose connection was lost during COMMIT: its outcome is unknown", async () => {
    let runs = 0;
    const lost = db.tx(
      async (q) => {
        runs++;
        const pid = await backendPid(q);
        await q.query("INSERT INTO entries (id, attempt) VALUES ('slow-commit', $1)", [runs]);
        // COMMIT runs the deferred trigger's two-second wait; the backend goes in the middle of it.
        setTimeout(() => void terminate(pid), 500);
      },
      { retryOnConnectionLoss: true },
    );

    const err: unknown = await lost.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionLostError);
    expect(err).toMatchObject({ mayHaveCommitted: true });
    expect((err as Error).message).toMatch(/outcome is unknown/);
    expect(runs).toBe(1);
  });

  it("rejects a statement outside a transaction whose backend is terminated under it, as possibly committed", async () => {
    const sleeping = db.query("SELECT pg_sleep(5)");
    let pid: number | undefined;
    for (let i = 0; i < 100 && pid === undefined; i++) {
      const { rows } = await admin.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'SELECT pg_sleep(5)' AND state = 'active'",
      );
      pid = rows[0]?.pid;
      if (pid === undefined) await new Promise((r) => setTimeout(r, 20));
    }
    await terminate(pid!);

    await expect(sleeping).rejects.toMatchObject({ name: "ConnectionLostError", mayHaveCommitted: true });
    expect((await db.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
  });

  it("replaces an idle pooled connection whose backend was terminated, without the caller noticing", async () => {
    const pid = await backendPid(db);
    await terminate(pid);

    const pids = await Promise.all([backendPid(db), backendPid(db)]);
    expect(pids).not.toContain(pid);
  });

  it("ends a cursor read with the error when its backend is terminated between two batches, and gives the pool a new connection", async () => {
    if (!db.cursor) throw new Error("postgres offers a cursor");
    const batches: number[][] = [];
    const read = async () => {
      for await (const batch of db.cursor!<{ n: number; pid: number }>(
        "SELECT g AS n, pg_backend_pid() AS pid FROM generate_series(1, 10) AS g ORDER BY g",
        [],
        3,
      )) {
        batches.push(batch.map((r) => r.n));
        if (batches.length === 1) await terminate(batch[0]!.pid);
      }
    };

    await expect(read()).rejects.toBeInstanceOf(ConnectionLostError);
    expect(batches).toEqual([[1, 2, 3]]);
    expect((await db.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
  });
});

describe("a database that cannot be reached", () => {
  let tdb: TestDatabase;
  let proxy: TcpProxy;
  let db: Db;

  beforeAll(async () => {
    tdb = await createTestDatabase("dbcut");
    const target = new URL(tdb.url);
    proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
    target.port = String(proxy.port);
    db = createPostgresDb({ url: target.toString(), schema: "svc_cut", max: 2 });
  });

  afterAll(async () => {
    await db.close();
    await proxy.close();
    await tdb.drop();
  });

  it("rejects a transaction without running it while the database refuses connections, and serves again once it is back", async () => {
    expect((await db.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    await proxy.cut();
    let runs = 0;

    const err: unknown = await db
      .tx(
        async () => {
          runs++;
        },
        { retryOnConnectionLoss: true },
      )
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "ConnectionLostError", status: 503, mayHaveCommitted: false });
    expect(runs).toBe(0);
    await expect(db.query("SELECT 1")).rejects.toBeInstanceOf(ConnectionLostError);

    await proxy.restore();
    expect(await db.tx(async (q) => (await q.query<{ one: number }>("SELECT 1 AS one")).rows)).toEqual([{ one: 1 }]);
  });
});
