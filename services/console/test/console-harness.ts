import type { Writable } from "node:stream";
import { createPostgresDb, type Db } from "@router/db";
import { createLogger } from "@router/logging";
import { CLIENT_OPTIONS, insecure } from "@router/grpc-kit";
import { ManualClock } from "@router/money";
import { ledger } from "@router/proto";
import { createTestDatabase, newIdentityKeys, readJsonOrText, type TestDatabase } from "@router/testkit";
import { startConsole, type RunningConsole } from "../src/app";

/** The key pepper of every console harness: keys made in its store hash with it. */
export const CONSOLE_TEST_PEPPER = "console-test-pepper-0123456789";

export interface ConsoleHarness {
  url: string;
  db: Db;
  testDb: TestDatabase;
  clock: ManualClock;
  console: RunningConsole;
  /** The edge's key pair: `identity.sign(...)` makes the header the gateway would forward. */
  identity: ReturnType<typeof newIdentityKeys>;
  close(): Promise<void>;
}

/** The real console on a fresh Postgres database, HTTP on a free port, its clock by hand. */
export async function startConsoleHarness(
  label: string,
  opts: { probeToken?: string; logTo?: Writable; dashboardDir?: string; now?: Date; gatewayUrl?: string } = {},
): Promise<ConsoleHarness> {
  const testDb = await createTestDatabase(label);
  const db = createPostgresDb({ url: testDb.url, schema: "console" });
  const clock = new ManualClock(opts.now ?? new Date("2026-11-21T10:00:00.000Z"));
  const log = opts.logTo ? createLogger({ level: "info", destination: opts.logTo }) : createLogger({ level: "silent" });
  const identity = newIdentityKeys();
  const ledgerClient = new ledger.LedgerServiceClient("127.0.0.1:1", insecure(), CLIENT_OPTIONS);
  const running = await startConsole({
    db,
    log,
    clock,
    httpPort: 0,
    grpcPort: "in-process",
    identityKeys: identity.publicKeys,
    masterKey: "console-test-master-key-0123456789",
    pepper: CONSOLE_TEST_PEPPER,
    csrfSecret: "console-test-internal-secret-0123456789",
    // Nothing these tests reach asks the ledger (keys' and workspaces' spend); the client never connects.
    ledger: ledgerClient,
    probeToken: opts.probeToken,
    dashboardDir: opts.dashboardDir,
    defaultMetrics: false,
    gatewayUrl: opts.gatewayUrl,
  });
  return {
    url: `http://127.0.0.1:${running.httpPort}`,
    db,
    testDb,
    clock,
    console: running,
    identity,
    async close() {
      await running.close();
      ledgerClient.close();
      await db.close();
      await testDb.drop();
    },
  };
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // Tests read arbitrary fields of the answer; the shape is what each test asserts.
  body: any;
}

/** One request to the console, JSON unless `rawBody` is given. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  const body = opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  if (body !== undefined) headers["content-type"] ??= "application/json";
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
  return { status: res.status, headers: res.headers, body: await readJsonOrText(res) };
}
