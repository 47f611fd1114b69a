import { randomBytes } from "node:crypto";
import { Metadata, status as grpcStatus } from "@grpc/grpc-js";
import { createBus, type EventBus } from "@router/bus";
import { generateIdentityKeyPair, parseIdentityPublicKeys, type Secrets } from "@router/config";
import { createPostgresDb, type Db } from "@router/db";
import { CLIENT_OPTIONS, insecure, startGrpcServer, type RunningGrpcServer } from "@router/grpc-kit";
import { identityPublicKeys, type IdentityPublicKeys } from "@router/http-kit";
import { createLogger, type Logger } from "@router/logging";
import { ManualClock } from "@router/money";
import { ledger, routing } from "@router/proto";
import { Browser, createTestDatabase, readJsonOrText, type TestDatabase } from "@router/testkit";
import { createOrganisation, startConsole, type OAuthProviders, type RunningConsole } from "@router/console";
import { startGateway, type RateLimitOverrides, type RunningGateway } from "../src/app";

export const silentLog = createLogger({ level: "silent" });

/** Every secret, the edge's identity key pair included: fake internal services verify with `publicKeysOf`. */
export function testSecrets(): Secrets {
  const identity = generateIdentityKeyPair();
  return {
    ROUTER_KEY_PEPPER: randomBytes(32).toString("base64url"),
    ROUTER_INTERNAL_SECRET: randomBytes(32).toString("base64url"),
    ROUTER_MASTER_KEY: randomBytes(32).toString("base64url"),
    ROUTER_IDENTITY_SIGNING_KEY: JSON.stringify(identity.signingKey),
    ROUTER_IDENTITY_PUBLIC_KEYS: JSON.stringify(identity.publicKeys),
  };
}

/** The public keys an internal service would verify this gateway's identities with. */
export function publicKeysOf(secrets: Secrets): IdentityPublicKeys {
  return identityPublicKeys(parseIdentityPublicKeys(secrets.ROUTER_IDENTITY_PUBLIC_KEYS));
}

/**
 * A real gRPC ledger server answering `Usage` from a table the test fills, and recording every
 * request so tests can see which ceilings the gateway asked about.
 */
export class FakeLedger {
  readonly used = new Map<string, bigint>();
  /** What `WorkspaceSpend` answers, by workspace id (unknown ones: nothing spent, no budgets). */
  readonly workspaces = new Map<string, Omit<ledger.WorkspaceSpendEntry, "workspaceId">>();
  /** `WorkspaceSpend` answers UNAVAILABLE, as an unreachable ledger would. */
  down = false;
  readonly usageRequests: ledger.UsageRequest[] = [];
  windowEndsAtMs: bigint | undefined = undefined;
  private server: RunningGrpcServer | null = null;

  async start(): Promise<string> {
    const unimplemented = (_call: unknown, cb: (err: Error) => void) => cb(new Error("not used by these tests"));
    const usage: ledger.LedgerServiceServer["usage"] = (call, cb) => {
      this.usageRequests.push(call.request);
      cb(null, {
        usage: call.request.ceilings.map((c) => ({
          subjectKind: c.subjectKind,
          subjectId: c.subjectId,
          usedNanodollars: this.used.get(c.subjectId) ?? 0n,
          windowEndsAtMs: c.window === ledger.Window.WINDOW_LIFETIME ? undefined : this.windowEndsAtMs,
        })),
      });
    };
    const workspaceSpend: ledger.LedgerServiceServer["workspaceSpend"] = (call, cb) => {
      if (this.down) {
        cb({ name: "Error", message: "ledger down", code: grpcStatus.UNAVAILABLE, details: "ledger down", metadata: new Metadata() });
        return;
      }
      cb(null, {
        workspaces: call.request.workspaceIds.map((workspaceId) => ({
          workspaceId,
          ...(this.workspaces.get(workspaceId) ?? { spendThisMonthNanodollars: 0n, budgets: [] }),
        })),
      });
    };
    this.server = await startGrpcServer(
      [
        {
          definition: ledger.LedgerServiceService,
          implementation: {
            admit: unimplemented,
            closeHolds: unimplemented,
            usage,
            workspaceSpend,
            budgetSubjects: unimplemented,
          },
        },
      ],
      { port: 0, log: silentLog },
    );
    return `127.0.0.1:${this.server.port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    await server?.close();
  }
}

export interface Harness {
  /** The gateway's own schema (stored responses, uptime before the console). */
  db: Db;
  /** The console's schema: organisations, people, sessions, keys. */
  consoleDb: Db;
  testDb: TestDatabase;
  clock: ManualClock;
  secrets: Secrets;
  ledger: FakeLedger;
  ledgerClient: ledger.LedgerServiceClient;
  routingClient: routing.RoutingServiceClient;
  gateway: RunningGateway;
  /** The real console beside it (identity, provider credentials), on the same database, called in process. */
  console: RunningConsole;
  url: string;
  startAnother(): Promise<RunningGateway>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  activityUrl?: string;
  alertsUrl?: string;
  routingUrl?: string;
  ledgerUrl?: string;
  reportsUrl?: string;
  broadcastUrl?: string;
  runawayUrl?: string;
  /** Where the gateway forwards the console's HTTP routes; default the real console beside it. */
  consoleUrl?: string;
  /** The process secrets; fresh ones by default. */
  secrets?: Secrets;
  redisUrl?: string;
  /** Starts the admin metrics listener on this port (0 picks one). */
  metricsPort?: number;
  /** Ceiling (USD) and lifetime (days) of keys issued through OAuth PKCE; unset keeps the defaults. */
  pkceKeyLimitUsd?: number;
  pkceKeyDays?: number;
  /** Identity providers offered for sign-in. */
  oauthProviders?: OAuthProviders;
  walletSignIn?: boolean;
  /** Replaces the windows of named rate limits (e.g. `{ management: [perMinute(3)] }`). */
  rateLimits?: RateLimitOverrides;
  /** `GATEWAY_TRUSTED_PROXIES`. */
  trustedProxies?: string[];
  /** Prefix of the rate-limit keys in Redis; default one per harness, so parallel runs never share counts. */
  rateLimitPrefix?: string;
  /** `GATEWAY_REGION_HEADER` / `GATEWAY_SUBDIVISION_HEADER`. */
  regionHeaders?: { region?: string; subdivision?: string };
  /** The gateway's logger; silent by default. */
  log?: Logger;
}

/** A gateway on port 0 against a fresh Postgres database and a real (fake-logic) ledger gRPC server. */
export async function startHarness(label: string, opts: HarnessOptions = {}): Promise<Harness> {
  const testDb = await createTestDatabase(label);
  const db = createPostgresDb({ url: testDb.url, schema: "gateway" });
  const clock = new ManualClock(new Date("2026-11-21T10:00:00.000Z"));
  const secrets = opts.secrets ?? testSecrets();
  const fakeLedger = new FakeLedger();
  const ledgerAddr = await fakeLedger.start();
  const ledgerClient = new ledger.LedgerServiceClient(ledgerAddr, insecure(), CLIENT_OPTIONS);
  // Nothing these tests reach calls routing over gRPC; the client never connects.
  const routingClient = new routing.RoutingServiceClient("127.0.0.1:1", insecure(), CLIENT_OPTIONS);
  const rateLimitPrefix = opts.rateLimitPrefix ?? `test:rl:${randomBytes(6).toString("hex")}`;
  const consoleDb = createPostgresDb({ url: testDb.url, schema: "console" });
  const consoleSvc = await startConsole({
    db: consoleDb,
    log: silentLog,
    clock,
    httpPort: 0,
    grpcPort: "in-process",
    identityKeys: publicKeysOf(secrets),
    masterKey: secrets.ROUTER_MASTER_KEY,
    pepper: secrets.ROUTER_KEY_PEPPER,
    csrfSecret: secrets.ROUTER_INTERNAL_SECRET,
    // The release the gateway's /health reports, named by the OpenAPI document too.
    version: "9.9.9-test",
    ledger: ledgerClient,
    grpcDeadlineMs: 2000,
    // Invitation links and sign-in redirects name the gateway, whose port is known once it listens.
    publicUrl: () => publicUrl,
    pkceKeyLimitUsd: opts.pkceKeyLimitUsd,
    pkceKeyDays: opts.pkceKeyDays,
    oauthProviders: opts.oauthProviders,
    walletSignIn: opts.walletSignIn,
    defaultMetrics: false,
  });
  let publicUrl = "";
  const gateways: RunningGateway[] = [];
  const buses: EventBus[] = [];
  const start = async () => {
    const bus = await createBus({ kind: "memory", clientId: "gateway-test", log: silentLog });
    buses.push(bus);
    const g = await startGateway({
      db,
      bus,
      log: opts.log ?? silentLog,
      clock,
      port: 0,
      secrets,
      routing: routingClient,
      ledger: ledgerClient,
      console: consoleSvc.inProcess,
      consoleUrl: opts.consoleUrl ?? `http://127.0.0.1:${consoleSvc.httpPort}`,
      activityUrl: opts.activityUrl ?? "http://127.0.0.1:1",
      alertsUrl: opts.alertsUrl ?? "http://127.0.0.1:1",
      routingUrl: opts.routingUrl ?? "http://127.0.0.1:1",
      ledgerUrl: opts.ledgerUrl ?? "http://127.0.0.1:1",
      reportsUrl: opts.reportsUrl ?? "http://127.0.0.1:1",
      broadcastUrl: opts.broadcastUrl ?? "http://127.0.0.1:1",
      runawayUrl: opts.runawayUrl ?? "http://127.0.0.1:1",
      providerBaseUrls: {},
      redisUrl: opts.redisUrl,
      rateLimits: opts.rateLimits,
      trustedProxies: opts.trustedProxies,
      rateLimitPrefix,
      grpcDeadlineMs: 2000,
      version: "9.9.9-test",
      metricsPort: opts.metricsPort,
      regionHeaders: opts.regionHeaders,
      drainGraceMs: 1_000,
    });
    gateways.push(g);
    return g;
  };
  const gateway = await start();
  publicUrl = `http://127.0.0.1:${gateway.port}`;
  return {
    db,
    consoleDb,
    testDb,
    clock,
    secrets,
    ledger: fakeLedger,
    ledgerClient,
    routingClient,
    gateway,
    console: consoleSvc,
    url: `http://127.0.0.1:${gateway.port}`,
    startAnother: start,
    async close() {
      for (const g of gateways) await g.close();
      for (const b of buses) await b.close();
      ledgerClient.close();
      routingClient.close();
      await fakeLedger.stop();
      await consoleSvc.close();
      await consoleDb.close();
      await db.close();
      await testDb.drop();
    },
  };
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // Tests read fields of whatever JSON came back.
  body: any;
}

/** One HTTP call to a gateway; `key` becomes the bearer token. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers["content-type"] ??= "application/json";
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
  return { status: res.status, headers: res.headers, body: await readJsonOrText(res) };
}

/** A new organisation with its management key. */
export async function newOrganisation(h: Harness, name = "Acme") {
  return createOrganisation(h.consoleDb, { name, operator: false }, h.secrets.ROUTER_KEY_PEPPER, h.clock);
}

/** A browser on the harness's clock, so its cookies expire when the gateway's clock says (see `Browser`). */
export function browserOf(h: Pick<Harness, "url" | "clock">, url = h.url): Browser {
  return new Browser(url, { now: () => h.clock.now() });
}
