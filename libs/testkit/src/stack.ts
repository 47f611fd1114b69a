import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { promisify } from "node:util";
import { createTestDatabase, dropRoles, type TestDatabase } from "./database";
import { parseEventStream, type ParsedEventStream } from "./event-stream";
import { freePort, httpReady, startNodeProcess, tcpReady, type ChildService } from "./processes";
import { newIdentityKeys } from "./identity-keys";
import { dropStackBus, prepareStackBus, stackBusEnv, stackBusOf, type StackBus } from "./stack-bus";

/** Every service's schema, each with its own login role when the stack runs them as in production. */
const STACK_SERVICES = ["gateway", "console", "routing", "ledger", "activity", "reports", "alerts", "broadcast", "runaway"];

/** The gateway and its replicas (`gateway-replica-<n>`). */
const isGateway = (s: ChildService): boolean => s.name.startsWith("gateway");

// libs/testkit/{src,dist} -> repository root
const root = join(__dirname, "..", "..", "..");
const main = (service: string) => join(root, "services", service, "dist", "main.js");

/**
 * The gateway's heap flags, as deploy/k8s/base/gateway.yaml and docker-compose.yml run it: a 128 MB
 * initial old generation, so the garbage its requests promote is collected every few minutes
 * rather than every few seconds (docs/performance.md).
 */
export const GATEWAY_NODE_ARGS = ["--initial-old-space-size=128"];

export interface Stack {
  gatewayUrl: string;
  /** The internal services' environment: the edge's public identity keys, not its signing key. */
  env: Record<string, string>;
  /** The gateway's: `env` and the edge's private identity key, which only the gateway holds. */
  gatewayEnv: Record<string, string>;
  /** The stack's bus: `createBus({ ...stack.bus, clientId, log })` makes a client of it. */
  bus: StackBus;
  services: ChildService[];
  /** Creates an organisation through the operator CLI and returns its management key. */
  createOrg(name: string, opts?: { operator?: boolean }): Promise<{ orgId: string; managementKey: string }>;
  /**
   * Starts one more gateway replica on the same services (stopped with the stack); returns its URL.
   * `ledger` points it at another ledger replica instead of the stack's first; `grpcLedger` only its
   * gRPC calls (Admit, leases), its management routes staying on the stack's first.
   */
  startGatewayReplica(opts?: { ledger?: LedgerReplica; grpcLedger?: LedgerReplica }): Promise<string>;
  /** Starts one more ledger replica on the same database and bus (stopped with the stack). */
  startLedgerReplica(): Promise<LedgerReplica>;
  stop(): Promise<void>;
  logs(): string;
}

export type StackOptions = Parameters<typeof startStackWith>[0];

/** Where a ledger replica serves: gRPC (LedgerService) and its management routes. */
export interface LedgerReplica {
  grpcAddr: string;
  httpUrl: string;
}

/**
 * A port picked free can be taken by another test process before the service binds it (every
 * stack starts nine services): a start that fails on EADDRINUSE is tried again on fresh ports.
 */
export async function startStack(opts: StackOptions): Promise<Stack> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startStackWith(opts);
    } catch (err) {
      if (attempt >= 3 || !String(err instanceof Error ? err.message : err).includes("EADDRINUSE")) throw err;
    }
  }
}

/**
 * Starts every service (console, routing, ledger, activity, reports, alerts, broadcast, runaway, then the
 * gateway) as separate Node processes on a fresh Postgres database, the real Redis and a real bus
 * (namespaced so parallel runs never share topics): Redis Streams, or Kafka when the environment
 * sets ROUTER_BUS=kafka and KAFKA_BROKERS (its topics declared first, as a deployment does), with
 * provider base URLs pointed at fake upstreams.
 */
async function startStackWith(opts: {
  providerBaseUrls: Record<string, string>;
  extraEnv?: Record<string, string>;
  /** Extra node flags for every service process, e.g. `--cpu-prof` (not allowed in NODE_OPTIONS). */
  nodeArgs?: string[];
  /** Only these services take `nodeArgs` (e.g. ["ledger"], to profile one without slowing the rest); default all. */
  nodeArgsFor?: string[];
  /** How long each service may take to come up; default 20 s. */
  startTimeoutMs?: number;
  /**
   * true (default): as in production, `router migrate --create-roles` prepares the database as its
   * owner and each service connects as its own login role with ROUTER_MIGRATE_ON_START=false.
   * false: every service connects as the owner and migrates at its start.
   */
  serviceRoles?: boolean;
}): Promise<Stack> {
  const bus = stackBusOf(`e2e-${randomBytes(4).toString("hex")}`);
  await prepareStackBus(bus);
  const db: TestDatabase = await createTestDatabase("e2e");
  const gatewayPort = await freePort();
  const routingHttp = await freePort();
  const routingGrpc = await freePort();
  const ledgerGrpc = await freePort();
  const ledgerHttp = await freePort();
  const activityHttp = await freePort();
  const reportsHttp = await freePort();
  const alertsHttp = await freePort();
  const broadcastHttp = await freePort();
  const runawayHttp = await freePort();
  const consoleHttp = await freePort();
  const consoleGrpc = await freePort();
  const identity = newIdentityKeys();
  const env: Record<string, string> = {
    DATABASE_URL: db.url,
    ...stackBusEnv(bus),
    // Tests read what consumers wrote right after a request: batches gather for 50 ms, not the
    // product's 250 (the bench sets the product's default back).
    ROUTER_BUS_BATCH_WAIT_MS: "50",
    // Rate-limit counts of this stack's gateways only (parallel stacks share one Redis).
    GATEWAY_RATE_LIMIT_PREFIX: `e2e:rl:${randomBytes(4).toString("hex")}`,
    ROUTER_KEY_PEPPER: randomBytes(32).toString("hex"),
    ROUTER_MASTER_KEY: randomBytes(32).toString("hex"),
    ROUTER_IDENTITY_PUBLIC_KEYS: identity.env.ROUTER_IDENTITY_PUBLIC_KEYS,
    ROUTER_DATA_DIR: join(root, ".data", `e2e-${randomBytes(4).toString("hex")}`),
    LOG_LEVEL: "warn",
    PORT: String(gatewayPort),
    ROUTING_HTTP_PORT: String(routingHttp),
    ROUTING_GRPC_PORT: String(routingGrpc),
    LEDGER_GRPC_PORT: String(ledgerGrpc),
    LEDGER_HTTP_PORT: String(ledgerHttp),
    ACTIVITY_HTTP_PORT: String(activityHttp),
    REPORTS_HTTP_PORT: String(reportsHttp),
    ALERTS_HTTP_PORT: String(alertsHttp),
    BROADCAST_HTTP_PORT: String(broadcastHttp),
    RUNAWAY_HTTP_PORT: String(runawayHttp),
    CONSOLE_HTTP_PORT: String(consoleHttp),
    CONSOLE_GRPC_PORT: String(consoleGrpc),
    ROUTING_GRPC_ADDR: `127.0.0.1:${routingGrpc}`,
    LEDGER_GRPC_ADDR: `127.0.0.1:${ledgerGrpc}`,
    ROUTING_HTTP_URL: `http://127.0.0.1:${routingHttp}`,
    ACTIVITY_HTTP_URL: `http://127.0.0.1:${activityHttp}`,
    LEDGER_HTTP_URL: `http://127.0.0.1:${ledgerHttp}`,
    REPORTS_HTTP_URL: `http://127.0.0.1:${reportsHttp}`,
    ALERTS_HTTP_URL: `http://127.0.0.1:${alertsHttp}`,
    BROADCAST_HTTP_URL: `http://127.0.0.1:${broadcastHttp}`,
    RUNAWAY_HTTP_URL: `http://127.0.0.1:${runawayHttp}`,
    CONSOLE_HTTP_URL: `http://127.0.0.1:${consoleHttp}`,
    CONSOLE_GRPC_ADDR: `127.0.0.1:${consoleGrpc}`,
    // Where the console's MCP tools call the gateway (it starts after the console: this is only its address).
    CONSOLE_GATEWAY_URL: `http://127.0.0.1:${gatewayPort}`,
    // Any free port: parallel stacks must never contend for the default metrics ports.
    GATEWAY_METRICS_PORT: "0",
    LEDGER_METRICS_PORT: "0",
    ...opts.extraEnv,
  };
  for (const [slug, url] of Object.entries(opts.providerBaseUrls)) {
    env[`ROUTER_PROVIDER_${slug.toUpperCase().replace(/-/g, "_")}_BASE_URL`] = url;
  }
  // As deployed: the edge and the console share the key of the sessions' CSRF tokens; only the
  // edge holds the private key it signs identities with.
  const internalSecret = randomBytes(32).toString("hex");
  const consoleEnv: Record<string, string> = { ...env, ROUTER_INTERNAL_SECRET: internalSecret, ...opts.extraEnv };
  const gatewayEnv: Record<string, string> = {
    ...env,
    ROUTER_IDENTITY_SIGNING_KEY: identity.env.ROUTER_IDENTITY_SIGNING_KEY,
    ROUTER_INTERNAL_SECRET: internalSecret,
    ...opts.extraEnv,
  };
  const argsOf = (service: string): string[] | undefined => (opts.nodeArgsFor === undefined || opts.nodeArgsFor.includes(service) ? opts.nodeArgs : undefined);
  const gatewayNodeArgs = [...GATEWAY_NODE_ARGS, ...(argsOf("gateway") ?? [])];
  const startTimeoutMs = opts.startTimeoutMs ?? 20_000;
  // Roles are cluster-wide: this stack's own names, dropped with it.
  const rolePrefix = opts.serviceRoles === false ? null : `rt${randomBytes(4).toString("hex")}_`;
  /** A service's environment: its own role's URL (trust auth: no password), or the stack's. */
  const as = (service: string, base: Record<string, string>): Record<string, string> => {
    if (rolePrefix === null) return base;
    const url = new URL(db.url);
    url.username = `${rolePrefix}${service}`;
    return { ...base, DATABASE_URL: url.toString(), ROUTER_MIGRATE_ON_START: "false", ...opts.extraEnv };
  };
  const services: ChildService[] = [];
  const dropStackRoles = () => (rolePrefix === null ? Promise.resolve() : dropRoles(STACK_SERVICES.map((s) => `${rolePrefix}${s}`)));
  // The edge first, as a rollout would: the gateway's shutdown hands its last settlements and lease
  // releases to a ledger that is still there.
  const stopAll = async () => {
    await Promise.all(services.filter(isGateway).map((s) => s.stop()));
    await Promise.all(services.filter((s) => !isGateway(s)).map((s) => s.stop()));
  };
  try {
    if (rolePrefix !== null) {
      await promisify(execFile)(process.execPath, [main("cli"), "migrate", "--create-roles"], {
        env: { PATH: process.env.PATH ?? "", DATABASE_URL: db.url, ROUTER_DB_ROLE_PREFIX: rolePrefix, LOG_LEVEL: "warn" },
      });
    }
    // Settled, not Promise.all: when one fails to start, the ones that did start are stopped too
    // (otherwise they outlive the test run and keep jest from exiting).
    const started = await Promise.allSettled([
      startNodeProcess("routing", main("routing"), as("routing", env), () => httpReady(`http://127.0.0.1:${routingHttp}/v1/providers`), startTimeoutMs, argsOf("routing")),
      startNodeProcess("ledger", main("ledger"), as("ledger", env), async () => (await tcpReady(ledgerGrpc)) && (await tcpReady(ledgerHttp)), startTimeoutMs, argsOf("ledger")),
      startNodeProcess("activity", main("activity"), as("activity", env), () => tcpReady(activityHttp), startTimeoutMs, argsOf("activity")),
      startNodeProcess("reports", main("reports"), as("reports", env), () => tcpReady(reportsHttp), startTimeoutMs, argsOf("reports")),
      startNodeProcess("alerts", main("alerts"), as("alerts", env), () => tcpReady(alertsHttp), startTimeoutMs, argsOf("alerts")),
      startNodeProcess("broadcast", main("broadcast"), as("broadcast", env), () => httpReady(`http://127.0.0.1:${broadcastHttp}/health`), startTimeoutMs, argsOf("broadcast")),
      startNodeProcess("runaway", main("runaway"), as("runaway", env), () => httpReady(`http://127.0.0.1:${runawayHttp}/health`), startTimeoutMs, argsOf("runaway")),
      startNodeProcess("console", main("console"), as("console", consoleEnv), async () => (await httpReady(`http://127.0.0.1:${consoleHttp}/health`)) && (await tcpReady(consoleGrpc)), startTimeoutMs, argsOf("console")),
    ]);
    for (const s of started) if (s.status === "fulfilled") services.push(s.value);
    const failed = started.find((s) => s.status === "rejected");
    if (failed) throw failed.reason;
    services.push(await startNodeProcess("gateway", main("gateway"), as("gateway", gatewayEnv), () => httpReady(`http://127.0.0.1:${gatewayPort}/health`), startTimeoutMs, gatewayNodeArgs));
  } catch (err) {
    await stopAll();
    await db.drop();
    await dropStackRoles();
    await dropStackBus(bus);
    throw err;
  }
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  return {
    gatewayUrl,
    env,
    gatewayEnv,
    bus,
    services,
    async createOrg(name, opts = {}) {
      const args = [main("cli"), "org", "create", "--name", name, ...(opts.operator ? ["--operator"] : [])];
      const { stdout, stderr } = await promisify(execFile)(process.execPath, args, {
        env: { PATH: process.env.PATH ?? "", ...env },
      });
      const line = stdout.trim().split("\n").find((l) => l.includes('"management_key"'));
      if (!line) throw new Error(`org create printed no management key:\n${stdout}\n${stderr}`);
      const out = JSON.parse(line) as { org_id: string; management_key: string };
      return { orgId: out.org_id, managementKey: out.management_key };
    },
    async startGatewayReplica(replicaOpts = {}) {
      const port = await freePort();
      const name = `gateway-replica-${services.filter(isGateway).length}`;
      const ledger: Record<string, string> = replicaOpts.ledger ? { LEDGER_GRPC_ADDR: replicaOpts.ledger.grpcAddr, LEDGER_HTTP_URL: replicaOpts.ledger.httpUrl } : {};
      // Admit and leases on another replica than the one that takes management writes, as a load balancer may send them.
      if (replicaOpts.grpcLedger) ledger.LEDGER_GRPC_ADDR = replicaOpts.grpcLedger.grpcAddr;
      // Each replica keeps its own bus outbox, as each pod would on its own volume.
      const replicaEnv = { ...as("gateway", gatewayEnv), ...ledger, PORT: String(port), ROUTER_DATA_DIR: join(env.ROUTER_DATA_DIR ?? "", name) };
      services.push(await startNodeProcess(name, main("gateway"), replicaEnv, () => httpReady(`http://127.0.0.1:${port}/health`), 20_000, gatewayNodeArgs));
      return `http://127.0.0.1:${port}`;
    },
    async startLedgerReplica() {
      const [grpc, http] = [await freePort(), await freePort()];
      const name = `ledger-replica-${services.filter((s) => s.name.startsWith("ledger")).length}`;
      const replicaEnv = { ...as("ledger", env), LEDGER_GRPC_PORT: String(grpc), LEDGER_HTTP_PORT: String(http), ROUTER_DATA_DIR: join(env.ROUTER_DATA_DIR ?? "", name) };
      services.push(
        await startNodeProcess(name, main("ledger"), replicaEnv, async () => (await tcpReady(grpc)) && (await tcpReady(http)), 20_000, argsOf("ledger")),
      );
      return { grpcAddr: `127.0.0.1:${grpc}`, httpUrl: `http://127.0.0.1:${http}` };
    },
    logs: () => services.map((s) => `--- ${s.name}\n${s.output()}`).join("\n"),
    async stop() {
      await stopAll();
      await db.drop();
      await dropStackRoles();
      await dropStackBus(bus);
    },
  };
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  text: string;
  // Test code reads arbitrary response fields; the shape is what the test asserts.
  json: Record<string, any>;
}

/** A streamed chat completion as the client received it. */
export interface StreamResponse extends ParsedEventStream {
  status: number;
  headers: Headers;
  /** The raw event-stream text. */
  text: string;
}

/** A small JSON client for the gateway, for end-to-end tests and benchmarks. */
export function gatewayClient(baseUrl: string, key: string) {
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: res.status, headers: res.headers, text, json: (json ?? {}) as Record<string, any> };
  };
  /** Posts a chat request with `stream: true` and reads the whole event stream. */
  const stream = async (body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<StreamResponse> => {
    const res = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
      body: JSON.stringify({ ...body, stream: true }),
    });
    const text = await res.text();
    const parsed = res.headers.get("content-type")?.startsWith("text/event-stream")
      ? parseEventStream(text)
      : { chunks: [], done: false, comments: [] };
    return { status: res.status, headers: res.headers, text, ...parsed };
  };
  return {
    stream,
    get: (path: string, headers?: Record<string, string>) => call("GET", path, undefined, headers),
    post: (path: string, body: unknown, headers?: Record<string, string>) => call("POST", path, body, headers),
    patch: (path: string, body: unknown) => call("PATCH", path, body),
    put: (path: string, body: unknown) => call("PUT", path, body),
    del: (path: string) => call("DELETE", path),
  };
}
