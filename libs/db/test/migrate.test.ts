import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
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

  describe("repeatable files", () => {
    const withFunctions = mkdtempSync(join(tmpdir(), "mig-fn-"));
    const repeatable = join(withFunctions, "repeatable");
    mkdirSync(repeatable);
    writeFileSync(join(withFunctions, "001_counts.sql"), "CREATE TABLE counts (id text PRIMARY KEY, n bigint NOT NULL);");
    const doubled = (factor: number) =>
      `CREATE OR REPLACE FUNCTION scaled(v bigint) RETURNS bigint LANGUAGE sql AS $$ SELECT v * ${factor} $$;`;
    let fdb: Db;
    beforeAll(() => {
      fdb = createPostgresDb({ url: tdb.url, schema: "svc_fn" });
    });
    afterAll(() => fdb.close());

    const scaledFive = async () => (await fdb.query<{ s: bigint }>("SELECT scaled(5) AS s")).rows[0]?.s;

    it("applies them after the versioned migrations, so a function may use their tables", async () => {
      writeFileSync(
        join(repeatable, "count_of.sql"),
        "CREATE OR REPLACE FUNCTION count_of(p text) RETURNS bigint LANGUAGE sql AS $$ SELECT n FROM counts WHERE id = p $$;",
      );
      writeFileSync(join(repeatable, "scaled.sql"), doubled(2));
      expect(await migrate(fdb, withFunctions)).toEqual({ applied: ["001_counts.sql"], repeated: ["count_of.sql", "scaled.sql"] });
      await fdb.query("INSERT INTO counts (id, n) VALUES ('a', 7)");
      expect((await fdb.query<{ c: bigint }>("SELECT count_of('a') AS c")).rows[0]?.c).toBe(7n);
      expect(await scaledFive()).toBe(10n);
    });

    it("applies nothing again while the files are unchanged", async () => {
      expect(await migrate(fdb, withFunctions)).toEqual({ applied: [], repeated: [] });
    });

    it("re-applies a changed file, whose new body then wins", async () => {
      writeFileSync(join(repeatable, "scaled.sql"), doubled(3));
      expect(await migrate(fdb, withFunctions)).toEqual({ applied: [], repeated: ["scaled.sql"] });
      expect(await scaledFive()).toBe(15n);
    });

    it("applies nothing of a run whose repeatable file fails", async () => {
      writeFileSync(join(withFunctions, "002_more_counts.sql"), "ALTER TABLE counts ADD COLUMN label text;");
      writeFileSync(join(repeatable, "scaled.sql"), "CREATE OR REPLACE FUNCTION scaled(v bigint) RETURNS bigint LANGUAGE sql AS $$ SELECT nope $$;");
      await expect(migrate(fdb, withFunctions)).rejects.toThrow();
      const label = await fdb.query("SELECT 1 FROM information_schema.columns WHERE table_schema = 'svc_fn' AND column_name = 'label'");
      expect(label.rowCount).toBe(0);
      expect(await scaledFive()).toBe(15n);
    });
  });
});
