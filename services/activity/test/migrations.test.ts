import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPostgresDb, migrate, type Db } from "@router/db";
import { createTestDatabase, type TestDatabase } from "@router/testkit";
import { ACTIVITY_MIGRATIONS_DIR } from "../src/app";

let testDb: TestDatabase;
let db: Db;
const firstOnly = mkdtempSync(join(tmpdir(), "activity-mig-"));

beforeAll(async () => {
  testDb = await createTestDatabase("activitymig");
  db = createPostgresDb({ url: testDb.url, schema: "activity" });
  copyFileSync(join(ACTIVITY_MIGRATIONS_DIR, "001_requests.sql"), join(firstOnly, "001_requests.sql"));
});

afterAll(async () => {
  await db.close();
  await testDb.drop();
  rmSync(firstOnly, { recursive: true, force: true });
});

test("fills the daily totals and conversations from the requests recorded before they existed", async () => {
  await migrate(db, firstOnly);
  await db.query(
    `INSERT INTO requests (id, org_id, workspace_id, created_at, requested_model, status, error_code, is_byok,
       list_cost_nanodollars, prompt_tokens, completion_tokens, cached_tokens, session_id)
     VALUES ('gen-old-1', 'org_old', 'ws_a', '2026-10-01T08:00:00Z', 'm', 'complete', NULL, true, 500, 10, 2, 4, 'sess'),
            ('gen-old-2', 'org_old', 'ws_a', '2026-10-01T20:00:00Z', 'm', 'error', 'upstream_error', false, 0, 3, 0, 0, 'sess'),
            ('gen-old-3', 'org_old', NULL, '2026-10-02T01:00:00Z', 'm', 'complete', NULL, false, 7, 1, 1, 0, NULL)`,
  );

  expect((await migrate(db, ACTIVITY_MIGRATIONS_DIR)).applied).toEqual([
    "002_totals_conversations_client.sql",
    "003_content_filter_labels.sql",
    "004_request_ingress.sql",
    "005_request_dropped_tools.sql",
    "006_request_cache_writes.sql",
    "007_provider_name_and_fees.sql",
  ]);

  const totals = await db.query(
    `SELECT workspace_key, to_char(day, 'YYYY-MM-DD') AS day, requests, errors, byok_requests, spend_nanodollars, prompt_tokens,
       completion_tokens, cached_tokens FROM daily_totals WHERE org_id = 'org_old' ORDER BY day`,
  );
  expect(totals.rows).toEqual([
    { workspace_key: "ws_a", day: "2026-10-01", requests: 2n, errors: 1n, byok_requests: 1n, spend_nanodollars: 500n, prompt_tokens: 13n, completion_tokens: 2n, cached_tokens: 4n },
    { workspace_key: "", day: "2026-10-02", requests: 1n, errors: 0n, byok_requests: 0n, spend_nanodollars: 7n, prompt_tokens: 1n, completion_tokens: 1n, cached_tokens: 0n },
  ]);
  const sessions = await db.query("SELECT session_id, started_at, last_seen_at FROM conversations WHERE org_id = 'org_old'");
  expect(sessions.rows).toEqual([
    { session_id: "sess", started_at: new Date("2026-10-01T08:00:00Z"), last_seen_at: new Date("2026-10-01T20:00:00Z") },
  ]);
  const names = await db.query("SELECT workspace_name FROM requests WHERE org_id = 'org_old'");
  expect(names.rows).toEqual([{ workspace_name: null }, { workspace_name: null }, { workspace_name: null }]);
});
