import { startTracing } from "@router/tracing";
import { ConfigError, loadConfig } from "@router/config";
import { openServiceDb } from "@router/db";
import { createLogger, installProcessHandlers, stopOnSignals } from "@router/logging";
import { systemClock } from "@router/money";
import { startLedger } from "./app";
import { ledgerConfigSchema } from "./config";

async function main(): Promise<void> {
  const config = loadConfig(ledgerConfigSchema);
  const log = createLogger({ level: config.LOG_LEVEL, base: { service: "ledger" } });
  installProcessHandlers(log);
  // Off unless the standard OTEL_* settings ask for traces.
  const tracing = startTracing({ serviceName: "router-ledger" });

  const store = await openServiceDb({ databaseUrl: config.DATABASE_URL, dataDir: config.ROUTER_DATA_DIR, schema: "ledger" });
  log.info({ database: store.describe }, "ledger.stores");

  const ledger = await startLedger({
    db: store.db,
    log,
    clock: systemClock,
    grpcPort: config.LEDGER_GRPC_PORT,
    host: config.LEDGER_HOST,
    holdTtlMs: config.LEDGER_HOLD_TTL_MS,
    sweepIntervalMs: config.LEDGER_SWEEP_INTERVAL_MS,
    leaseTtlMs: config.LEDGER_LEASE_TTL_MS,
    leaseShare: config.LEDGER_LEASE_SHARE,
    metricsPort: config.LEDGER_METRICS_PORT,
    metricsHost: config.METRICS_HOST,
  });
  log.info({ grpcPort: ledger.grpcPort, metricsPort: ledger.metricsPort }, "ledger.started");

  stopOnSignals(log, "ledger", async () => {
    await ledger.close();
    await store.close();
    await tracing.shutdown();
  });
}

main().catch((err: unknown) => {
  // The logger may not exist yet (bad config), so the failure goes to stderr as it is.
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
