import { createBus, type BusConfig, type EventBus } from "@router/bus";
import { createPostgresDb, type Db } from "@router/db";
import { createLogger } from "@router/logging";
import type { Clock } from "@router/money";
import { createTestDatabase } from "@router/testkit";
import { startActivity } from "../src/app";
import { TEST_IDENTITY } from "./request-events";

export interface ActivityHarness {
  db: Db;
  bus: EventBus;
  /** `http://127.0.0.1:<port>` of the running service. */
  base: string;
  close(): Promise<void>;
}

/** The real service in-process: a fresh Postgres database, the memory bus, HTTP on a free port. */
export async function startActivityHarness(
  label: string,
  clock: Clock,
  bus: Partial<Pick<BusConfig, "retryDelayMs">> = {},
  opts: {
    exportMaxRows?: number;
    /** Serve as on embedded PGlite: a store that offers no cursor (the export pages by keyset). */
    withoutCursor?: boolean;
  } = {},
): Promise<ActivityHarness> {
  const testDb = await createTestDatabase(label);
  const db = createPostgresDb({ url: testDb.url, schema: "activity" });
  const served: Db = opts.withoutCursor ? { ...db, cursor: undefined } : db;
  const log = createLogger({ level: "silent" });
  const eventBus = await createBus({ kind: "memory", clientId: label, log, ...bus });
  const activity = await startActivity({
    db: served,
    bus: eventBus,
    log,
    clock,
    httpPort: 0,
    identityKeys: TEST_IDENTITY.publicKeys,
    exportMaxRows: opts.exportMaxRows,
  });
  return {
    db,
    bus: eventBus,
    base: `http://127.0.0.1:${activity.httpPort}`,
    async close() {
      await activity.close();
      await eventBus.close();
      await db.close();
      await testDb.drop();
    },
  };
}
