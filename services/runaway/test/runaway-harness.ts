import { createBus, type EventBus, type IncomingEvent } from "@router/bus";
import { createPostgresDb, type Db } from "@router/db";
import { createLogger } from "@router/logging";
import type { ManualClock } from "@router/money";
import { events, TOPICS } from "@router/proto";
import { createTestDatabase, type TestDatabase } from "@router/testkit";
import { startRunaway, type RuleFloors, type RunningRunaway } from "../src/app";
import { identityHeader, TEST_IDENTITY } from "./runaway-events";

export interface RunawayHarness {
  db: Db;
  bus: EventBus;
  runaway: RunningRunaway;
  /** `http://127.0.0.1:<port>` of the running service. */
  base: string;
  /** Every `router.spend.runaway_flagged.v1` event seen on the bus, decoded, with its event id. */
  flagged: Array<{ eventId: string; key: string; event: events.RunawayFlagged }>;
  /** A second instance of the service on the same database and bus (another replica). */
  startReplica(): Promise<RunningRunaway>;
  get(path: string, orgId: string, opts?: Parameters<typeof identityHeader>[1]): Promise<{ status: number; body: any }>;
  put(path: string, orgId: string, body: unknown, opts?: Parameters<typeof identityHeader>[1]): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/**
 * The real service in-process on a fresh Postgres database and a real bus adapter (memory unless a
 * bus is given), HTTP on a free port, no scheduled sweeps: tests sweep by hand on their clock.
 */
export async function startRunawayHarness(
  label: string,
  clock: ManualClock,
  opts: { bus?: EventBus; floors?: RuleFloors } = {},
): Promise<RunawayHarness> {
  const testDb: TestDatabase = await createTestDatabase(label);
  const log = createLogger({ level: "silent" });
  const dbs: Db[] = [];
  const openDb = () => {
    const db = createPostgresDb({ url: testDb.url, schema: "runaway" });
    dbs.push(db);
    return db;
  };
  const bus = opts.bus ?? (await createBus({ kind: "memory", clientId: label, log, retryDelayMs: 5 }));
  const replicas: RunningRunaway[] = [];
  const start = async () => {
    const r = await startRunaway({ db: openDb(), bus, log, clock, httpPort: 0, identityKeys: TEST_IDENTITY.publicKeys, sweepIntervalMs: 0, floors: opts.floors });
    replicas.push(r);
    return r;
  };
  const runaway = await start();
  const flagged: RunawayHarness["flagged"] = [];
  const watcher = await bus.subscribe({
    topic: TOPICS.runawayFlagged,
    group: `${label}-watcher`,
    handler: async (e: IncomingEvent) => {
      flagged.push({ eventId: e.id, key: e.key, event: events.RunawayFlagged.decode(e.payload) });
    },
  });
  const base = `http://127.0.0.1:${runaway.httpPort}`;
  const call = async (method: string, path: string, orgId: string, body: unknown, id: Parameters<typeof identityHeader>[1]) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...(await identityHeader(orgId, id)), ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  return {
    db: dbs[0]!,
    bus,
    runaway,
    base,
    flagged,
    startReplica: start,
    get: (path, orgId, id) => call("GET", path, orgId, undefined, id),
    put: (path, orgId, body, id) => call("PUT", path, orgId, body, id),
    async close() {
      await watcher.close();
      for (const r of replicas) await r.close();
      if (!opts.bus) await bus.close();
      for (const db of dbs) await db.close();
      await testDb.drop();
    },
  };
}
