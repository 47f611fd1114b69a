import { startTracing } from "@router/tracing";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { busConfigOf, createBus } from "@router/bus";
import { formerSignInSettings, loadConfig, providerBaseUrls } from "@router/config";
import { openServiceDb } from "@router/db";
import { clientOptionsFor, insecure } from "@router/grpc-kit";
import { createLogger, exitOnStartFailure, installProcessHandlers, stopOnSignals } from "@router/logging";
import { systemClock } from "@router/money";
import { consoleRpc, ledger, routing } from "@router/proto";
import { GATEWAY_SCHEMA, migrateGateway, startGateway } from "./app";
import { gatewayConfigSchema, gatewaySecrets, storedResponseOptionsOf, rateLimitOptionsOf, regionOptionsOf, upstreamOptionsOf } from "./config";

async function main(): Promise<void> {
  const config = loadConfig(gatewayConfigSchema, process.env);
  const log = createLogger({ level: config.LOG_LEVEL, base: { service: "gateway" } });
  installProcessHandlers(log);
  // Off unless the standard OTEL_* settings ask for traces.
  const tracing = startTracing({ serviceName: "router-gateway" });
  // Sign-in is the console's: set on the gateway, these reach nothing.
  for (const moved of formerSignInSettings(process.env)) {
    log.warn({ ...moved, reads: "the console" }, "gateway.setting_moved_to_console");
  }
  const version = (JSON.parse(readFileSync(join(__dirname, "..", "package.json"), "utf8")) as { version: string }).version;
  const { secrets, generated } = gatewaySecrets(config, process.env);
  const baseUrls = providerBaseUrls(process.env);

  const store = await openServiceDb({ databaseUrl: config.DATABASE_URL, dataDir: config.ROUTER_DATA_DIR, schema: GATEWAY_SCHEMA });
  const db = store.db;
  const embedded: string[] = [];
  if (!config.DATABASE_URL) embedded.push(`database (${store.describe})`);
  if (!config.REDIS_URL) embedded.push("rate limits and caches (in memory, per instance)");
  if (config.ROUTER_BUS === "memory") embedded.push("event bus (in process)");
  if (generated.length > 0) embedded.push(`secrets generated into ROUTER_DATA_DIR (${generated.join(", ")})`);
  if (embedded.length > 0) log.info({ embedded }, "gateway.embedded_defaults");

  const bus = await createBus(
    busConfigOf(config, { clientId: "gateway", dataDir: config.ROUTER_DATA_DIR, outboxDir: config.ROUTER_OUTBOX_DIR, log }),
  );
  const routingClient = new routing.RoutingServiceClient(config.ROUTING_GRPC_ADDR, insecure(), clientOptionsFor(config.ROUTING_GRPC_ADDR));
  const consoleClient = new consoleRpc.ConsoleServiceClient(config.CONSOLE_GRPC_ADDR, insecure(), clientOptionsFor(config.CONSOLE_GRPC_ADDR));
  const ledgerClient = new ledger.LedgerServiceClient(config.LEDGER_GRPC_ADDR, insecure(), clientOptionsFor(config.LEDGER_GRPC_ADDR));

  await migrateGateway(db, { migrateOnStart: config.ROUTER_MIGRATE_ON_START });
  const gateway = await startGateway({
    db,
    migrateOnStart: config.ROUTER_MIGRATE_ON_START,
    bus,
    log,
    clock: systemClock,
    port: config.PORT,
    host: config.HOST,
    secrets,
    routing: routingClient,
    console: consoleClient,
    ledger: ledgerClient,
    activityUrl: config.ACTIVITY_HTTP_URL,
    alertsUrl: config.ALERTS_HTTP_URL,
    runawayUrl: config.RUNAWAY_HTTP_URL,
    consoleUrl: config.CONSOLE_HTTP_URL,
    routingUrl: config.ROUTING_HTTP_URL,
    ledgerUrl: config.LEDGER_HTTP_URL,
    reportsUrl: config.REPORTS_HTTP_URL,
    broadcastUrl: config.BROADCAST_HTTP_URL,
    providerBaseUrls: baseUrls,
    redisUrl: config.REDIS_URL,
    grpcDeadlineMs: config.GRPC_DEADLINE_MS,
    planCacheMs: config.GATEWAY_PLAN_CACHE_MS,
    leaseUseMs: config.GATEWAY_LEASE_USE_MS,
    ledgerAdmitStreams: config.GATEWAY_LEDGER_ADMIT_STREAMS,
    holdRenewMs: config.GATEWAY_HOLD_RENEW_MS,
    ...upstreamOptionsOf(config),
    ...storedResponseOptionsOf(config),
    ...regionOptionsOf(config),
    ...rateLimitOptionsOf(config),
    version,
    metricsPort: config.GATEWAY_METRICS_PORT,
    metricsHost: config.METRICS_HOST,
  });

  // Streams finish (or are cut at the end of the drain grace) and hand on their events and spend
  // before any channel closes; the bus then flushes its outbox; the store closes last.
  stopOnSignals(log, "gateway", [
    { step: "gateway", run: () => gateway.close(), timeoutMs: gateway.closeTimeoutMs },
    { step: "grpc", run: () => (routingClient.close(), ledgerClient.close(), consoleClient.close()) },
    { step: "bus", run: () => bus.close() },
    { step: "store", run: () => store.close() },
    { step: "tracing", run: () => tracing.shutdown() },
  ]);
}

main().catch(exitOnStartFailure("gateway"));
