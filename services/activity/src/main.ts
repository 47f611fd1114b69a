import { startTracing } from "@router/tracing";
import { busConfigOf, createBus } from "@router/bus";
import { loadConfig, serviceSecrets } from "@router/config";
import { openServiceDb } from "@router/db";
import { createLogger, exitOnStartFailure, installProcessHandlers, stopOnSignals } from "@router/logging";
import { systemClock } from "@router/money";
import { startActivity } from "./app";
import { activityConfigSchema } from "./config";

async function main(): Promise<void> {
  const cfg = loadConfig(activityConfigSchema);
  const log = createLogger({ level: cfg.LOG_LEVEL, base: { service: "activity" } });
  installProcessHandlers(log);
  // Off unless the standard OTEL_* settings ask for traces.
  const tracing = startTracing({ serviceName: "router-activity" });
  const secret = serviceSecrets(process.env, ["ROUTER_INTERNAL_SECRET"], { dataDir: cfg.ROUTER_DATA_DIR, embedded: cfg.DATABASE_URL === undefined }).ROUTER_INTERNAL_SECRET;

  const store = await openServiceDb({ databaseUrl: cfg.DATABASE_URL, dataDir: cfg.ROUTER_DATA_DIR, schema: "activity" });
  const bus = await createBus(busConfigOf(cfg, { clientId: "activity", dataDir: cfg.ROUTER_DATA_DIR, log }));
  const running = await startActivity({
    db: store.db,
    bus,
    log,
    clock: systemClock,
    httpPort: cfg.ACTIVITY_HTTP_PORT,
    host: cfg.ACTIVITY_HOST,
    internalSecret: secret,
  });
  log.info(
    { httpPort: running.httpPort, bus: cfg.ROUTER_BUS, database: store.describe },
    "activity.listening",
  );

  // Handlers finish and commit first; the bus then flushes its outbox; the store closes last.
  stopOnSignals(log, "activity", [
    { step: "activity", run: () => running.close() },
    { step: "bus", run: () => bus.close() },
    { step: "store", run: () => store.close() },
    { step: "tracing", run: () => tracing.shutdown() },
  ]);
}

main().catch(exitOnStartFailure("activity"));
