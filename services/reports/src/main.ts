import { startTracing } from "@router/tracing";
import { busConfigOf, createBus } from "@router/bus";
import { loadConfig, serviceSecrets } from "@router/config";
import { openServiceDb } from "@router/db";
import { createLogger, exitOnStartFailure, installProcessHandlers, stopOnSignals } from "@router/logging";
import { systemClock } from "@router/money";
import { REPORTS_SCHEMA, startReports } from "./app";
import { reportsConfigSchema } from "./config";

async function main(): Promise<void> {
  const config = loadConfig(reportsConfigSchema);
  const log = createLogger({ level: config.LOG_LEVEL, base: { service: "reports" } });
  installProcessHandlers(log);
  // Off unless the standard OTEL_* settings ask for traces.
  const tracing = startTracing({ serviceName: "router-reports" });
  const secret = serviceSecrets(process.env, ["ROUTER_INTERNAL_SECRET"], { dataDir: config.ROUTER_DATA_DIR, embedded: config.DATABASE_URL === undefined }).ROUTER_INTERNAL_SECRET;

  const store = await openServiceDb({ databaseUrl: config.DATABASE_URL, dataDir: config.ROUTER_DATA_DIR, schema: REPORTS_SCHEMA });
  const bus = await createBus(busConfigOf(config, { clientId: "reports", dataDir: config.ROUTER_DATA_DIR, log }));
  const running = await startReports({
    db: store.db,
    bus,
    log,
    clock: systemClock,
    httpPort: config.REPORTS_HTTP_PORT,
    host: config.REPORTS_HOST,
    internalSecret: secret,
  });
  log.info({ httpPort: running.httpPort, bus: config.ROUTER_BUS, database: store.describe }, "reports.listening");

  // Handlers finish and commit first; the bus then flushes its outbox; the store closes last.
  stopOnSignals(log, "reports", [
    { step: "reports", run: () => running.close() },
    { step: "bus", run: () => bus.close() },
    { step: "store", run: () => store.close() },
    { step: "tracing", run: () => tracing.shutdown() },
  ]);
}

main().catch(exitOnStartFailure("reports"));
