import { Client } from "pg";
import { createBus, type EventBus } from "@router/bus";
import { createPostgresDb, type Db } from "@router/db";
import { createLogger } from "@router/logging";
import { systemClock } from "@router/money";
import { events } from "@router/proto";
import { createTestDatabase, startHttpsReceiver, TcpProxy, waitFor, type HttpsReceiver, type TestDatabase } from "@router/testkit";
import { REQUEST_COMPLETED_TOPIC, startBroadcast, type RunningBroadcast } from "../src/app";
import { identityHeaders, servedRequest, TEST_MASTER_KEY, TEST_IDENTITY } from "./broadcast-fixtures";

/**
 * The service in-process on real Postgres (reached through a proxy the test can cut), the memory
 * bus and a real HTTPS receiver, while its database connections are terminated or cut under it.
 */
// Several organisations, each with its own destination: the load spreads over their delivery lanes.
const ORGS = ["org_loss_a", "org_loss_b", "org_loss_c", "org_loss_d", "org_loss_e"];

describe("broadcast when its database connections are lost", () => {
  let testDb: TestDatabase;
  let proxy: TcpProxy;
  let db: Db;
  let bus: EventBus;
  let receiver: HttpsReceiver;
  let service: RunningBroadcast;
  let admin: Client;
  let base: string;
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => void uncaught.push(err);

  beforeAll(async () => {
    process.on("uncaughtException", onUncaught);
    testDb = await createTestDatabase("bcloss");
    admin = new Client({ connectionString: testDb.url });
    await admin.connect();
    const target = new URL(testDb.url);
    proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
    target.port = String(proxy.port);
    db = createPostgresDb({ url: target.toString(), schema: "broadcast", applicationName: "router-broadcast-under-test" });
    const log = createLogger({ level: "silent" });
    bus = await createBus({ kind: "memory", clientId: "bcloss", log, retryDelayMs: 20 });
    receiver = await startHttpsReceiver();
    receiver.respondWith(() => ({ status: 200 }));
    service = await startBroadcast({
      db,
      bus,
      log,
      clock: systemClock,
      httpPort: 0,
      identityKeys: TEST_IDENTITY.publicKeys,
      masterKey: TEST_MASTER_KEY,
      outbound: { allowHosts: ["127.0.0.1"], ca: receiver.ca, retries: 2, retryDelayMs: 5, timeoutMs: 2_000 },
      defaultMetrics: false,
    });
    base = `http://127.0.0.1:${service.httpPort}`;
    for (const orgId of ORGS) {
      const res = await fetch(`${base}/v1/broadcast/destinations`, {
        method: "POST",
        headers: await identityHeaders(orgId),
        body: JSON.stringify({ kind: "webhook", url: `${receiver.url}/loss` }),
      });
      expect(res.status).toBe(201);
    }
  });

  afterEach(() => {
    expect(uncaught).toEqual([]);
  });

  afterAll(async () => {
    process.off("uncaughtException", onUncaught);
    await service.close();
    await bus.close();
    await receiver.close();
    await db.close();
    await proxy.close();
    await admin.end();
    await testDb.drop();
  });

  const publish = (e: events.RequestCompleted) =>
    bus.publish({ topic: REQUEST_COMPLETED_TOPIC, key: e.orgId, type: REQUEST_COMPLETED_TOPIC, payload: events.RequestCompleted.encode(e).finish() });
  const delivered = () => receiver.requests.filter((r) => r.path === "/loss").map((r) => (JSON.parse(r.body) as { request: { id: string } }).request.id);
  const health = async () => {
    const res = await fetch(`${base}/health`);
    return { status: res.status, body: (await res.json()) as { database: string } };
  };

  it("survives every backend of its database being terminated under load, and delivers every event once", async () => {
    const published: string[] = [];
    // Backends go every 25 ms while bursts of events arrive, so some go mid-transaction.
    let terminating = true;
    let terminated = 0;
    const terminator = (async () => {
      while (terminating) {
        const { rows } = await admin.query<{ n: number }>(
          "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = 'router-broadcast-under-test'",
        );
        terminated += rows[0]!.n;
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    for (let burst = 0; burst < 20; burst++) {
      const events = ORGS.flatMap((orgId) => [servedRequest(orgId), servedRequest(orgId)]);
      published.push(...events.map((e) => e.requestId));
      await Promise.all(events.map(publish));
      await new Promise((r) => setTimeout(r, 100));
    }
    terminating = false;
    await terminator;

    await waitFor(() => delivered().length >= published.length, { what: "every event delivered", timeoutMs: 30_000 });
    await service.idle();
    expect(terminated).toBeGreaterThanOrEqual(5);
    expect(delivered().sort()).toEqual([...published].sort());
    expect((await health()).status).toBe(200);
  });

  it("fails its readiness while the database is unreachable, and recovers by itself once it is back", async () => {
    expect(await health()).toMatchObject({ status: 200, body: { database: "ok" } });

    await proxy.cut();
    await waitFor(async () => (await health()).status === 503, { what: "readiness failing", timeoutMs: 10_000 });
    expect((await health()).body).toMatchObject({ database: "unreachable" });

    await proxy.restore();
    await waitFor(async () => (await health()).status === 200, { what: "readiness back", timeoutMs: 10_000 });
    const event = servedRequest(ORGS[0]!);
    await publish(event);
    await waitFor(() => delivered().includes(event.requestId), { what: "a delivery after the database came back" });
  });
});
