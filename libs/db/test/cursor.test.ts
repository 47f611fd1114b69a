import { createPostgresDb, type Db } from "@router/db";
import { createTestDatabase, type TestDatabase } from "@router/testkit";

describe("reading a large result through a cursor on real Postgres", () => {
  let tdb: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    tdb = await createTestDatabase("dbcursor");
    // One connection: a cursor that did not give its connection back would hang the next query.
    db = createPostgresDb({ url: tdb.url, schema: "svc_cursor", max: 1 });
    await db.query("CREATE SCHEMA IF NOT EXISTS svc_cursor");
    await db.query("CREATE TABLE svc_cursor.items (n integer PRIMARY KEY, amount bigint NOT NULL)");
    await db.query("INSERT INTO items SELECT g, g::bigint * 1000000000000 FROM generate_series(1, 25) AS g");
  });

  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  const cursorOf = (d: Db) => {
    if (!d.cursor) throw new Error("postgres offers a cursor");
    return d.cursor.bind(d);
  };

  it("yields the rows in batches of the size asked, in the query's order, in the service's schema", async () => {
    const sizes: number[] = [];
    const seen: number[] = [];
    for await (const batch of cursorOf(db)<{ n: number }>("SELECT n FROM items WHERE n > $1 ORDER BY n", [3], 10)) {
      sizes.push(batch.length);
      seen.push(...batch.map((r) => r.n));
    }

    expect(sizes).toEqual([10, 10, 2]);
    expect(seen).toEqual(Array.from({ length: 22 }, (_, i) => i + 4));
  });

  it("returns bigint columns as bigint, like the pool's own queries", async () => {
    const batches: Array<{ amount: unknown }[]> = [];
    for await (const batch of cursorOf(db)<{ amount: unknown }>("SELECT amount FROM items WHERE n = 25", [], 5)) batches.push(batch);

    expect(batches).toEqual([[{ amount: 25_000_000_000_000n }]]);
  });

  it("gives its connection back when the reader stops early", async () => {
    for await (const batch of cursorOf(db)<{ n: number }>("SELECT n FROM items ORDER BY n", [], 5)) {
      expect(batch).toHaveLength(5);
      break;
    }

    const after = await db.query<{ count: bigint }>("SELECT count(*) AS count FROM items");
    expect(after.rows[0]?.count).toBe(25n);
  });

  it("gives its connection back when the query fails, and reports the failure", async () => {
    const read = async () => {
      for await (const batch of cursorOf(db)("SELECT 1 / (n - 20) FROM items ORDER BY n", [], 100)) void batch;
    };

    await expect(read()).rejects.toThrow(/division by zero/);
    expect((await db.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
  });
});
