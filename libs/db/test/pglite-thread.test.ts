import { performance } from "node:perf_hooks";
import { EmbeddedPostgres } from "../src/pglite";

/**
 * The one-process default's database on its own thread: the same answers as before (int8 as
 * bigint, bytea as bytes, errors with their SQLSTATE), transactions that commit or roll back whole,
 * and an event loop that keeps turning while a long statement runs.
 */
describe("embedded Postgres on a worker thread", () => {
  let pg: EmbeddedPostgres;

  beforeAll(async () => {
    pg = await EmbeddedPostgres.open(null);
  }, 60_000);
  afterAll(async () => {
    await pg?.close();
  });

  it("answers with bigints, bytes and JSON as the in-process PGlite did, in each service's own schema", async () => {
    const a = pg.forSchema("alpha");
    const b = pg.forSchema("beta");
    await a.query("CREATE SCHEMA IF NOT EXISTS alpha; CREATE TABLE alpha.t (n int8, b bytea, j jsonb)");
    await b.query("CREATE SCHEMA IF NOT EXISTS beta; CREATE TABLE beta.t (name text)");
    await a.query("INSERT INTO t VALUES ($1, $2, $3::jsonb)", [9_007_199_254_740_993n, Buffer.from([1, 2, 255]), JSON.stringify({ k: [1, "x"] })]);
    await b.query("INSERT INTO t VALUES ($1)", ["only in beta"]);
    const row = (await a.query<{ n: bigint; b: Uint8Array; j: unknown }>("SELECT n, b, j FROM t")).rows[0]!;
    expect(row.n).toBe(9_007_199_254_740_993n);
    expect([...row.b]).toEqual([1, 2, 255]);
    expect(row.j).toEqual({ k: [1, "x"] });
    expect((await b.query<{ name: string }>("SELECT name FROM t")).rows).toEqual([{ name: "only in beta" }]);
  });

  it("keeps a failed statement's SQLSTATE and message, and rolls a failed transaction back whole", async () => {
    const a = pg.forSchema("alpha");
    await a.query("CREATE TABLE u (id text PRIMARY KEY)");
    await a.query("INSERT INTO u VALUES ('one')");
    const dup = await a.query("INSERT INTO u VALUES ('one')").catch((e: unknown) => e as { code?: string; message?: string });
    expect(dup).toMatchObject({ code: "23505" });
    expect(String((dup as { message: string }).message)).toContain("duplicate key");
    await expect(
      a.tx(async (q) => {
        await q.query("INSERT INTO u VALUES ('two')");
        await q.query("INSERT INTO u VALUES ('one')");
      }),
    ).rejects.toMatchObject({ code: "23505" });
    expect((await a.query<{ id: string }>("SELECT id FROM u ORDER BY id")).rows).toEqual([{ id: "one" }]);
  });

  it("lets the event loop turn while a long statement runs", async () => {
    const a = pg.forSchema("alpha");
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const t0 = performance.now();
    await a.query("SELECT count(*) FROM generate_series(1, 3000000)");
    const took = performance.now() - t0;
    clearInterval(timer);
    // On the main thread the WASM statement blocked every timer until it ended (one tick at most).
    expect(took).toBeGreaterThan(50);
    expect(ticks).toBeGreaterThan(took / 5 / 4);
  });
});
