import { createBus, type EventBus } from "@router/bus";
import { createPostgresDb, type Db } from "@router/db";
import { createLogger } from "@router/logging";
import type { Clock } from "@router/money";
import { events } from "@router/proto";
import type { OutboundOptions } from "@router/outbound";
import { createTestDatabase, startHttpsReceiver, type HttpsReceiver } from "@router/testkit";
import { REQUEST_COMPLETED_TOPIC, startBroadcast, type RunningBroadcast } from "../src/app";
import { identityHeaders, TEST_MASTER_KEY, TEST_IDENTITY } from "./broadcast-fixtures";

export interface BroadcastHarness {
  db: Db;
  bus: EventBus;
  service: RunningBroadcast;
  /** One real HTTPS receiver on loopback; `/fail...` answers 500, `/hang...` never answers, anything else 200. */
  receiver: HttpsReceiver;
  /** `http://127.0.0.1:<port>` of the running service. */
  base: string;
  publish(e: events.RequestCompleted, eventId?: string): Promise<void>;
  /** Calls a route as a caller of `orgId` (owner unless told). */
  call(method: string, path: string, orgId: string, body?: unknown, opts?: Parameters<typeof identityHeaders>[1]): Promise<{ status: number; json: any }>;
  close(): Promise<void>;
}

/**
 * The real service in-process: a fresh Postgres database, the memory bus, HTTP on a free port, and
 * deliveries through the real outbound library to a real HTTPS receiver (loopback allowed and its
 * certificate trusted through the test-only settings).
 */
export async function startBroadcastHarness(label: string, clock: Clock, outbound: Partial<OutboundOptions> = {}): Promise<BroadcastHarness> {
  const testDb = await createTestDatabase(label);
  const db = createPostgresDb({ url: testDb.url, schema: "broadcast" });
  const log = createLogger({ level: "silent" });
  const bus = await createBus({ kind: "memory", clientId: label, log, retryDelayMs: 5 });
  const receiver = await startHttpsReceiver();
  receiver.respondWith((req) => (req.path.startsWith("/hang") ? "hang" : { status: req.path.startsWith("/fail") ? 500 : 200 }));
  const service = await startBroadcast({
    db,
    bus,
    log,
    clock,
    httpPort: 0,
    identityKeys: TEST_IDENTITY.publicKeys,
    masterKey: TEST_MASTER_KEY,
    outbound: { allowHosts: ["127.0.0.1"], ca: receiver.ca, retries: 2, retryDelayMs: 5, timeoutMs: 2_000, ...outbound },
    defaultMetrics: false,
  });
  const base = `http://127.0.0.1:${service.httpPort}`;
  return {
    db,
    bus,
    service,
    receiver,
    base,
    publish: (e, eventId) =>
      bus.publish({ topic: REQUEST_COMPLETED_TOPIC, key: e.orgId, type: REQUEST_COMPLETED_TOPIC, payload: events.RequestCompleted.encode(e).finish(), id: eventId }),
    async call(method, path, orgId, body, opts) {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: await identityHeaders(orgId, opts),
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : null };
    },
    async close() {
      await service.close();
      await bus.close();
      await receiver.close();
      await db.close();
      await testDb.drop();
    },
  };
}
