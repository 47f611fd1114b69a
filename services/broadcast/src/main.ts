import { startTracing } from "@router/tracing";
import { busConfigOf, createBus } from "@router/bus";
import { identityPublicKeys } from "@router/http-kit";
import { loadConfig, parseIdentityPublicKeys, serviceSecrets } from "@router/config";
import { openServiceDb } from "@router/db";
import { createLogger, exitOnStartFailure, installProcessHandlers, stopOnSignals } from "@router/logging";
import { systemClock } from "@router/money";
import { outboundOptionsOf } from "@router/outbound";
import { startBroadcast } from "./app";
import { broadcastConfigSchema } from "./config";

async function main(): Promise<void> {
  const cfg = loadConfig(broadcastConfigSchema);
  const log = createLogger({ level: cfg.LOG_LEVEL, base: { service: "broadcast" } });
  installProcessHandlers(log);
  // Off unless the standard OTEL_* settings ask for traces.
  const tracing = startTracing({ serviceName: "router-broadcast" });
  const secrets = serviceSecrets(process.env, ["ROUTER_IDENTITY_PUBLIC_KEYS", "ROUTER_MASTER_KEY"], { dataDir: cfg.ROUTER_DATA_DIR, embedded: cfg.DATABASE_URL === undefined });
  const masterKey = secrets.ROUTER_MASTER_KEY;
  // The edge's public keys only: this service verifies the identity the gateway signs, and cannot sign one.
  const identityKeys = identityPublicKeys(parseIdentityPublicKeys(secrets.ROUTER_IDENTITY_PUBLIC_KEYS));

  const store = await openServiceDb({ databaseUrl: cfg.DATABASE_URL, dataDir: cfg.ROUTER_DATA_DIR, schema: "broadcast" });
  const bus = await createBus(busConfigOf(cfg, { clientId: "broadcast", dataDir: cfg.ROUTER_DATA_DIR, log }));
  const { log: _log, clock: _clock, ...outbound } = outboundOptionsOf(cfg, { log });
  const running = await startBroadcast({
    db: store.db,
    migrateOnStart: cfg.ROUTER_MIGRATE_ON_START,
    bus,
    log,
    clock: systemClock,
    httpPort: cfg.BROADCAST_HTTP_PORT,
    host: cfg.BROADCAST_HOST,
    identityKeys,
    masterKey,
    outbound,
    dedupeRetentionMs: cfg.BROADCAST_DEDUPE_RETENTION_HOURS * 60 * 60 * 1000,
  });
  log.info({ httpPort: running.httpPort, bus: cfg.ROUTER_BUS, database: store.describe }, "broadcast.listening");

  // Handlers finish and commit first; the bus then flushes its outbox; the store closes last.
  stopOnSignals(log, "broadcast", [
    { step: "broadcast", run: () => running.close() },
    { step: "bus", run: () => bus.close() },
    { step: "store", run: () => store.close() },
    { step: "tracing", run: () => tracing.shutdown() },
  ]);
}

main().catch(exitOnStartFailure("broadcast"));
