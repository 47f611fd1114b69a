import { startTracing } from "@router/tracing";
import { busConfigOf, createBus } from "@router/bus";
import { identityPublicKeys } from "@router/http-kit";
import { loadConfig, providerBaseUrls, parseIdentityPublicKeys, serviceSecrets } from "@router/config";
import { openServiceDb } from "@router/db";
import { createLogger, exitOnStartFailure, installProcessHandlers, stopOnSignals } from "@router/logging";
import { systemClock } from "@router/money";
import { ROUTING_SCHEMA, startRouting } from "./app";
import { RoutingConfig } from "./config";

async function main(): Promise<void> {
  const config = loadConfig(RoutingConfig);
  const log = createLogger({ level: config.LOG_LEVEL, base: { service: "routing" } });
  installProcessHandlers(log);
  // Off unless the standard OTEL_* settings ask for traces.
  const tracing = startTracing({ serviceName: "router-routing" });
  // The edge's public keys only: this service verifies the identity the gateway signs, and cannot sign one.
  const identityKeys = identityPublicKeys(
    parseIdentityPublicKeys(serviceSecrets(process.env, ["ROUTER_IDENTITY_PUBLIC_KEYS"], { dataDir: config.ROUTER_DATA_DIR, embedded: config.DATABASE_URL === undefined }).ROUTER_IDENTITY_PUBLIC_KEYS),
  );

  const store = await openServiceDb({ databaseUrl: config.DATABASE_URL, dataDir: config.ROUTER_DATA_DIR, schema: ROUTING_SCHEMA });
  const db = store.db;
  log.info({ database: store.describe, bus: config.ROUTER_BUS }, "routing.stores");
  const bus = await createBus(busConfigOf(config, { clientId: "routing", dataDir: config.ROUTER_DATA_DIR, log }));

  const running = await startRouting({
    db,
    migrateOnStart: config.ROUTER_MIGRATE_ON_START,
    bus,
    log,
    clock: systemClock,
    httpPort: config.ROUTING_HTTP_PORT,
    grpcPort: config.ROUTING_GRPC_PORT,
    host: config.ROUTING_HOST,
    catalogFile: config.ROUTING_CATALOG_FILE,
    providerBaseUrls: providerBaseUrls(process.env),
    identityKeys,
    redisUrl: config.REDIS_URL,
    stickyIdleTtlMs: config.ROUTING_STICKY_IDLE_TTL_SECONDS * 1000,
  });

  // Handlers finish and commit first; the bus then flushes its outbox; the store closes last.
  stopOnSignals(log, "routing", [
    { step: "routing", run: () => running.close() },
    { step: "bus", run: () => bus.close() },
    { step: "store", run: () => store.close() },
    { step: "tracing", run: () => tracing.shutdown() },
  ]);
}

main().catch(exitOnStartFailure("routing"));
