import net from "node:net";
import { createPostgresDb, DatabaseReadiness, type Db } from "@router/db";
import { createTestDatabase, TcpProxy, type TestDatabase } from "@router/testkit";

const FRESH_FOR_MS = 1_000;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("database readiness on real Postgres behind a proxy the test cuts", () => {
  let tdb: TestDatabase;
  let proxy: TcpProxy;
  let db: Db;

  beforeAll(async () => {
    tdb = await createTestDatabase("dbready");
    const target = new URL(tdb.url);
    proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
    target.port = String(proxy.port);
    db = createPostgresDb({ url: target.toString(), schema: "svc_ready", max: 2 });
  });

  afterAll(async () => {
    await db.close();
    await proxy.close();
    await tdb.drop();
  });

  it("goes false while the database is unreachable and true again once it is back, with no restart", async () => {
    const readiness = new DatabaseReadiness(db, { freshForMs: FRESH_FOR_MS });
    expect(await readiness.reachable()).toBe(true);
    expect(readiness.lastError).toBeUndefined();

    await proxy.cut();
    // Within freshForMs the last answer stands: a burst of probes costs one query.
    expect(await readiness.reachable()).toBe(true);
    await pause(FRESH_FOR_MS);
    expect(await readiness.reachable()).toBe(false);
    expect(readiness.lastError).toMatchObject({ name: "ConnectionLostError" });

    await proxy.restore();
    expect(await readiness.reachable()).toBe(false);
    await pause(FRESH_FOR_MS);
    expect(await readiness.reachable()).toBe(true);
    expect(readiness.lastError).toBeUndefined();
  });
});

describe("database readiness when the database accepts connections and never answers", () => {
  let server: net.Server;
  const sockets: net.Socket[] = [];
  let db: Db;

  beforeAll(async () => {
    server = net.createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    db = createPostgresDb({ url: `postgres://postgres@127.0.0.1:${port}/none`, schema: "svc_hang", max: 2 });
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
    await db.close();
  });

  it("answers false within its timeout, and never sends a second probe while the first still waits", async () => {
    const readiness = new DatabaseReadiness(db, { freshForMs: 0, timeoutMs: 200 });

    const started = Date.now();
    expect(await Promise.all([readiness.reachable(), readiness.reachable()])).toEqual([false, false]);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(readiness.lastError).toMatchObject({ message: "the database did not answer within 200 ms" });
    expect(await readiness.reachable()).toBe(false);

    expect(sockets).toHaveLength(1);
  });
});
