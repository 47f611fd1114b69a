import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPostgresDb, type Db } from "@router/db";
import { CLIENT_OPTIONS, callUnary, insecure } from "@router/grpc-kit";
import { createLogger } from "@router/logging";
import { ManualClock } from "@router/money";
import { routing } from "@router/proto";
import { createTestDatabase, type TestDatabase } from "@router/testkit";
import { startRouting, type RoutingDeps, type RunningRouting } from "../src/app";

export interface Harness {
  database: TestDatabase;
  db: Db;
  clock: ManualClock;
  service: RunningRouting;
  baseUrl: string;
  client: routing.RoutingServiceClient;
  plan(req: Partial<routing.PlanRequest>): Promise<routing.PlanResponse>;
  get(path: string): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export const silentLog = createLogger({ level: "silent" });

/** Writes a catalog object to a temporary file so a service can import it on first start. */
export function catalogFileOf(catalog: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), "routing-catalog-")), "catalog.json");
  writeFileSync(file, JSON.stringify(catalog));
  return file;
}

/** Starts the routing service in-process on port 0 against a fresh database. */
export async function startHarness(opts: { catalog?: unknown } & Partial<RoutingDeps> = {}): Promise<Harness> {
  const database = await createTestDatabase("routing");
  const db = createPostgresDb({ url: database.url, schema: "routing" });
  const clock = new ManualClock(new Date("2025-11-01T12:00:00.000Z"));
  const { catalog, ...overrides } = opts;
  const service = await startRouting({
    db,
    log: silentLog,
    clock,
    httpPort: 0,
    grpcPort: 0,
    catalogFile: catalog === undefined ? undefined : catalogFileOf(catalog),
    ...overrides,
  });
  const client = new routing.RoutingServiceClient(`127.0.0.1:${service.grpcPort}`, insecure(), CLIENT_OPTIONS);
  const baseUrl = `http://127.0.0.1:${service.httpPort}`;
  const harness: Harness = {
    database,
    db,
    clock,
    service,
    baseUrl,
    client,
    plan: (req) =>
      callUnary(client, client.plan, routing.PlanRequest.fromPartial(req), { deadlineMs: 5000, service: "routing" }),
    async get(path) {
      const res = await fetch(baseUrl + path);
      return { status: res.status, body: await res.json() };
    },
    async close() {
      client.close();
      await service.close();
      await harness.db.close();
      await database.drop();
    },
  };
  return harness;
}
