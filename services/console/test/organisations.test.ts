import { createPostgresDb, prepareSchema, type Db } from "@router/db";
import { ManualClock } from "@router/money";
import { createTestDatabase, type TestDatabase } from "@router/testkit";
import { CONSOLE_MIGRATIONS_DIR, createOrganisation, ensureOperatorOrganisation } from "../src/app";
import { hashKey } from "@router/api-keys";

let testDb: TestDatabase;
let db: Db;
const clock = new ManualClock();
const pepper = "pepper-for-organisation-tests";

beforeAll(async () => {
  testDb = await createTestDatabase("consoleorgs");
  db = createPostgresDb({ url: testDb.url, schema: "console" });
  await prepareSchema(db, CONSOLE_MIGRATIONS_DIR, { migrateOnStart: true });
});

afterAll(async () => {
  await db.close();
  await testDb.drop();
});

describe("operator CLI: organisations", () => {
  it("creates an organisation with a default workspace and a management key stored only as its hash", async () => {
    const created = await createOrganisation(db, { name: "Acme Corp", operator: false }, pepper, clock);
    expect(created.orgId).toMatch(/^org_[0-9A-Za-z]+$/);
    expect(created.workspaceId).toMatch(/^ws_[0-9A-Za-z]+$/);
    expect(created.managementKey).toMatch(/^rt-mgmt-/);
    const org = await db.query("SELECT name, slug, operator FROM organisations WHERE id = $1", [created.orgId]);
    expect(org.rows[0]).toEqual({ name: "Acme Corp", slug: "acme-corp", operator: false });
    const key = await db.query("SELECT class, workspace_id FROM keys WHERE hash = $1 AND org_id = $2", [
      hashKey(created.managementKey, pepper),
      created.orgId,
    ]);
    expect(key.rows[0]).toEqual({ class: "management", workspace_id: created.workspaceId });
  });

  it("gives a second organisation of the same name its own slug", async () => {
    const a = await createOrganisation(db, { name: "Twin", operator: false }, pepper, clock);
    const b = await createOrganisation(db, { name: "Twin", operator: false }, pepper, clock);
    const slugs = await db.query<{ slug: string }>("SELECT slug FROM organisations WHERE id = ANY($1) ORDER BY slug", [[a.orgId, b.orgId]]);
    expect(new Set(slugs.rows.map((r) => r.slug)).size).toBe(2);
  });

  it("refuses an empty or over-long name", async () => {
    await expect(createOrganisation(db, { name: "  ", operator: false }, pepper, clock)).rejects.toThrow(/^name:/);
    await expect(createOrganisation(db, { name: "x".repeat(81), operator: false }, pepper, clock)).rejects.toThrow(/^name:/);
  });

  it("creates the operator organisation on the first start only, even when starts race", async () => {
    const results = await Promise.all([
      ensureOperatorOrganisation(db, pepper, clock),
      ensureOperatorOrganisation(db, pepper, clock),
      ensureOperatorOrganisation(db, pepper, clock),
    ]);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(results.find((r) => r.created)?.managementKey).toMatch(/^rt-mgmt-/);
    expect(await ensureOperatorOrganisation(db, pepper, clock)).toEqual({ created: false });
    const operators = await db.query("SELECT id FROM organisations WHERE operator");
    expect(operators.rows).toHaveLength(1);
  });
});
