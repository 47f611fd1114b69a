import { createBus, type EventBus } from "@router/bus";
import { createPostgresDb, type Db } from "@router/db";
import { createLogger } from "@router/logging";
import type { ManualClock } from "@router/money";
import type { events } from "@router/proto";
import { createTestDatabase, readJsonOrText } from "@router/testkit";
import { REQUEST_COMPLETED_TOPIC, startReports, type RunningReports } from "../src/app";
import { encodeEvent, identityHeader, TEST_IDENTITY, type IdentityOptions } from "./report-events";

export interface ReportsHarness {
  db: Db;
  bus: EventBus;
  clock: ManualClock;
  service: RunningReports;
  /** `http://127.0.0.1:<port>` of the running service. */
  base: string;
  /** Publishes the event on the bus as the gateway does: protobuf, keyed by organisation. */
  publish(e: events.RequestCompleted | Uint8Array, id?: string): Promise<void>;
  /** Calls the service with the signed identity `as` describes. */
  call(method: string, path: string, as?: IdentityOptions, body?: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/** The real service in-process: a fresh Postgres database, the memory bus adapter, HTTP on a free port. */
export async function startReportsHarness(label: string, clock: ManualClock, busOpts: { retryDelayMs?: number } = {}): Promise<ReportsHarness> {
  const testDb = await createTestDatabase(label);
  const db = createPostgresDb({ url: testDb.url, schema: "reports" });
  const log = createLogger({ level: "silent" });
  const bus = await createBus({ kind: "memory", clientId: label, log, ...busOpts });
  const service = await startReports({ db, bus, log, clock, httpPort: 0, identityKeys: TEST_IDENTITY.publicKeys, defaultMetrics: false });
  const base = `http://127.0.0.1:${service.httpPort}`;
  return {
    db,
    bus,
    clock,
    service,
    base,
    publish(e, id) {
      const payload = e instanceof Uint8Array ? e : encodeEvent(e);
      const key = e instanceof Uint8Array ? "org_bus" : e.orgId;
      return bus.publish({ topic: REQUEST_COMPLETED_TOPIC, key, type: REQUEST_COMPLETED_TOPIC, payload, id });
    },
    async call(method, path, as = {}, body) {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { ...(await identityHeader(as)), ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await readJsonOrText(res) };
    },
    async close() {
      await service.close();
      await bus.close();
      await db.close();
      await testDb.drop();
    },
  };
}
