import { startTracing } from "@router/tracing";
import { loadConfig } from "@router/config";
import { openServiceDb } from "@router/db";
import { createLogger, exitOnStartFailure, installProcessHandlers, stopOnSignals } from "@router/logging";
import { systemClock } from "@router/money";
import { startConsole } from "./app";
import { consoleConfigSchema } from "./config";

async function main(): Promise<void> {
  const cfg = loadConfig(consoleConfigSchema);
  const log = createLogger({ level: cfg.LOG_LEVEL, base: { service: "console" } });
  installProcessHandlers(log);
  // Off unless the standard OTEL_* settings ask for traces.
  const tracing = startTracing({ serviceName: "router-console" });

  const store = await openServiceDb({ databaseUrl: cfg.DATABASE_URL, dataDir: cfg.ROUTER_DATA_DIR, schema: "console" });
  const running = await startConsole({
    db: store.db,
    migrateOnStart: cfg.ROUTER_MIGRATE_ON_START,
    log,
    clock: systemClock,
    httpPort: cfg.CONSOLE_HTTP_PORT,
    host: cfg.CONSOLE_HOST,
    probeToken: cfg.ROUTER_PROBE_TOKEN,
    dashboardDir: cfg.CONSOLE_DASHBOARD_DIR,
  });
  log.info({ httpPort: running.httpPort, database: store.describe }, "console.listening");

  stopOnSignals(log, "console", [
    { step: "console", run: () => running.close() },
    { step: "store", run: () => store.close() },
    { step: "tracing", run: () => tracing.shutdown() },
  ]);
}

main().catch(exitOnStartFailure("console"));
