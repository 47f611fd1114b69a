import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPostgresDb, type Db } from "@router/db";
import { CLIENT_OPTIONS, callUnary, insecure } from "@router/grpc-kit";
import { IDENTITY_HEADER, signIdentity, type Identity } from "@router/http-kit";
import { createLogger } from "@router/logging";
import { ManualClock } from "@router/money";
import { routing } from "@router/proto";
import { createTestDatabase, TEST_REDIS_URL, uniqueName, type TestDatabase, type TestIdentityKeys } from "@router/testkit";
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

/** A management caller's signed identity, as the gateway forwards it; owner unless overridden. */
export function managementIdentity(orgId: string, overrides: Partial<Identity> = {}): Identity {
  return { orgId, credential: "management", keyHash: "b".repeat(64), keyName: "mgmt", workspaceId: null, role: "owner", userId: null, operator: false, ...overrides };
}

/** Calls a management route with the identity signed by `keys` as the gateway signs it (none: unsigned). */
export async function signedCall(baseUrl: string, keys: TestIdentityKeys, method: string, path: string, identity: Identity | null, body?: unknown) {
  const headers: Record<string, string> = {};
  if (identity) headers[IDENTITY_HEADER] = await signIdentity(identity, keys.signingKey);
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

/** Two routing replicas on one database and one Redis: `h` (HTTP writes) and a second one's Plan. */
export interface ReplicaPair {
  h: Harness;
  /** Plan on the second replica, whose caches (presets, guardrails, privacy, defaults) refresh only every ten minutes. */
  planOnOther(req: Partial<routing.PlanRequest>): Promise<routing.PlanResponse>;
  close(): Promise<void>;
}

export async function startReplicaPair(catalog: unknown, keys: TestIdentityKeys): Promise<ReplicaPair> {
  const common = { identityKeys: keys.publicKeys, redisUrl: TEST_REDIS_URL, presetRefreshMs: 600_000, defaultsRefreshMs: 600_000 };
  const h = await startHarness({ catalog, ...common });
  const otherDb = createPostgresDb({ url: h.database.url, schema: "routing" });
  const other = await startRouting({ db: otherDb, log: silentLog, clock: h.clock, httpPort: 0, grpcPort: 0, stickyKeyPrefix: `${uniqueName("sticky")}:`, ...common });
  const client = new routing.RoutingServiceClient(`127.0.0.1:${other.grpcPort}`, insecure(), CLIENT_OPTIONS);
  return {
    h,
    planOnOther: (req) => callUnary(client, client.plan, routing.PlanRequest.fromPartial(req), { deadlineMs: 5000, service: "routing" }),
    async close() {
      client.close();
      await other.close();
      await otherDb.close();
      await h.close();
    },
  };
}

/** Pub/sub is asynchronous: an eviction lands within milliseconds, far inside the ten-minute refresh. */
export async function expectSoon(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} after 2 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A fresh organisation id per call, so tests sharing one database never see each other's rows. */
export function orgIds(prefix: string): () => string {
  let seq = 0;
  return () => `org_${prefix}${(seq += 1)}_${Math.random().toString(16).slice(2, 8)}`;
}

/** The providers serving `acme/one` in a plan's cascade, in order. */
export const servedAcmeOne = (res: routing.PlanResponse): string[] =>
  res.cascade.filter((c) => c.modelId === "acme/one").map((c) => c.providerSlug);

/** Management calls signed as one identity: `get(path)`, `post(path, body)`, `put(...)`, `del(path)`. */
export function signedClient(baseUrl: () => string, keys: TestIdentityKeys, identity: Identity) {
  const send = (method: string) => (path: string, body?: unknown) => signedCall(baseUrl(), keys, method, path, identity, body);
  return { get: send("GET"), post: send("POST"), put: send("PUT"), del: send("DELETE") };
}
