import { busConfigOf, createBus } from "@router/bus";
import { ConfigError, loadConfig, resolveSecrets } from "@router/config";
import { startTracing } from "@router/tracing";
import { openServiceDb } from "@router/db";
import { createLogger, installProcessHandlers, stopOnSignals } from "@router/logging";
import { systemClock } from "@router/money";
import { startLedger } from "./app";
import { ledgerConfigSchema, type LedgerConfig } from "./config";

/**
 * Only the internal secret matters here. A deployment sets it (the ledger need not hold the key
 * pepper or master key); the embedded default shares the one generated under ROUTER_DATA_DIR.
 */
function internalSecret(config: LedgerConfig): string {
  if (config.ROUTER_INTERNAL_SECRET) return config.ROUTER_INTERNAL_SECRET;
  if (config.DATABASE_URL !== undefined) {
    throw new ConfigError(["ROUTER_INTERNAL_SECRET: required with DATABASE_URL (it verifies the identity the gateway forwards)"]);
  }
  return resolveSecrets(process.env, config.ROUTER_DATA_DIR, { allowGenerated: true }).secrets.ROUTER_INTERNAL_SECRET;
}

async function main(): Promise<void> {
  const config = loadConfig(ledgerConfigSchema);
  const log = createLogger({ level: config.LOG_LEVEL, base: { service: "ledger" } });
  installProcessHandlers(log);
  const secret = internalSecret(config);
  // Off unless the standard OTEL_* settings ask for traces.
  const tracing = startTracing({ serviceName: "router-ledger" });

  const store = await openServiceDb({ databaseUrl: config.DATABASE_URL, dataDir: config.ROUTER_DATA_DIR, schema: "ledger" });
  log.info({ database: store.describe, bus: config.ROUTER_BUS }, "ledger.stores");
  const bus = await createBus(busConfigOf(config, { clientId: "ledger", dataDir: config.ROUTER_DATA_DIR, log }));

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
    httpPort: config.LEDGER_HTTP_PORT,
    internalSecret: secret,
    bus,
    budgetRefreshMs: config.LEDGER_BUDGET_REFRESH_MS,
  });
  log.info({ grpcPort: ledger.grpcPort, httpPort: ledger.httpPort, metricsPort: ledger.metricsPort }, "ledger.started");

  stopOnSignals(log, "ledger", async () => {
    await ledger.close();
    await bus.close();
    await store.close();
    await tracing.shutdown();
  });
}

main().catch((err: unknown) => {
  // The logger may not exist yet (bad config), so the failure goes to stderr as it is.
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
