import { startTracing } from "@router/tracing";
import { busConfigOf, createBus } from "@router/bus";
import { loadConfig, serviceSecrets } from "@router/config";
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
  const { ROUTER_INTERNAL_SECRET: internalSecret, ROUTER_MASTER_KEY: masterKey } = serviceSecrets(process.env, ["ROUTER_INTERNAL_SECRET", "ROUTER_MASTER_KEY"], { dataDir: cfg.ROUTER_DATA_DIR, embedded: cfg.DATABASE_URL === undefined });

  const store = await openServiceDb({ databaseUrl: cfg.DATABASE_URL, dataDir: cfg.ROUTER_DATA_DIR, schema: "broadcast" });
  const bus = await createBus(busConfigOf(cfg, { clientId: "broadcast", dataDir: cfg.ROUTER_DATA_DIR, log }));
  const { log: _log, clock: _clock, ...outbound } = outboundOptionsOf(cfg, { log });
  const running = await startBroadcast({
    db: store.db,
    bus,
    log,
    clock: systemClock,
    httpPort: cfg.BROADCAST_HTTP_PORT,
    host: cfg.BROADCAST_HOST,
    internalSecret,
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
