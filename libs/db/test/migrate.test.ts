import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPostgresDb, migrate, type Db } from "@router/db";
import { createTestDatabase, type TestDatabase } from "@router/testkit";

describe("migrations on real Postgres", () => {
  let tdb: TestDatabase;
  let db: Db;
  const dir = mkdtempSync(join(tmpdir(), "mig-"));
  writeFileSync(join(dir, "001_init.sql"), "CREATE TABLE things (id text PRIMARY KEY, n bigint NOT NULL);\nCREATE INDEX things_n ON things (n);");
  writeFileSync(join(dir, "002_more.sql"), "ALTER TABLE things ADD COLUMN label text;");

  beforeAll(async () => {
    tdb = await createTestDatabase("migrate");
    db = createPostgresDb({ url: tdb.url, schema: "svc_a" });
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  it("applies each file once, in order, into the service's own schema", async () => {
    expect((await migrate(db, dir)).applied).toEqual(["001_init.sql", "002_more.sql"]);
    expect((await migrate(db, dir)).applied).toEqual([]);
    const r = await db.query<{ table_schema: string }>(
      "SELECT table_schema FROM information_schema.tables WHERE table_name = 'things'",
    );
    expect(r.rows.map((x) => x.table_schema)).toEqual(["svc_a"]);
  });

  it("returns int8 columns as bigint and rolls a failed transaction back", async () => {
    await db.query("INSERT INTO things (id, n) VALUES ($1, $2)", ["a", "9007199254740993"]);
    const r = await db.query<{ n: bigint }>("SELECT n FROM things WHERE id = 'a'");
    expect(r.rows[0]?.n).toBe(9007199254740993n);
    await expect(
      db.tx(async (q) => {
        await q.query("INSERT INTO things (id, n) VALUES ('b', 1)");
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect((await db.query("SELECT 1 FROM things WHERE id = 'b'")).rowCount).toBe(0);
  });
});
