import { busConfigOf, createBus } from "@router/bus";
import { identityPublicKeys } from "@router/http-kit";
import { loadConfig, parseIdentityPublicKeys, serviceSecrets } from "@router/config";
import { startTracing } from "@router/tracing";
import { openServiceDb } from "@router/db";
import { createLogger, exitOnStartFailure, installProcessHandlers, stopOnSignals } from "@router/logging";
import { systemClock } from "@router/money";
import { startLedger } from "./app";
import { feeScheduleOf, ledgerConfigSchema, stripeSettingsOf } from "./config";

async function main(): Promise<void> {
  const config = loadConfig(ledgerConfigSchema);
  const log = createLogger({ level: config.LOG_LEVEL, base: { service: "ledger" } });
  installProcessHandlers(log);
  // The edge's public keys only: this service verifies the identity the gateway signs, and cannot sign one.
  const identityKeys = identityPublicKeys(
    parseIdentityPublicKeys(serviceSecrets(process.env, ["ROUTER_IDENTITY_PUBLIC_KEYS"], { dataDir: config.ROUTER_DATA_DIR, embedded: config.DATABASE_URL === undefined }).ROUTER_IDENTITY_PUBLIC_KEYS),
  );
  // Off unless the standard OTEL_* settings ask for traces.
  const tracing = startTracing({ serviceName: "router-ledger" });

  const store = await openServiceDb({ databaseUrl: config.DATABASE_URL, dataDir: config.ROUTER_DATA_DIR, schema: "ledger" });
  log.info({ database: store.describe, bus: config.ROUTER_BUS }, "ledger.stores");
  const bus = await createBus(busConfigOf(config, { clientId: "ledger", dataDir: config.ROUTER_DATA_DIR, log }));

  const ledger = await startLedger({
    db: store.db,
    migrateOnStart: config.ROUTER_MIGRATE_ON_START,
    log,
    clock: systemClock,
    grpcPort: config.LEDGER_GRPC_PORT,
    host: config.LEDGER_HOST,
    holdTtlMs: config.LEDGER_HOLD_TTL_MS,
    sweepIntervalMs: config.LEDGER_SWEEP_INTERVAL_MS,
    leaseTtlMs: config.LEDGER_LEASE_TTL_MS,
    leaseShare: config.LEDGER_LEASE_SHARE,
    leaseWaitMs: config.LEDGER_LEASE_WAIT_MS,
    metricsPort: config.LEDGER_METRICS_PORT,
    metricsHost: config.METRICS_HOST,
    httpPort: config.LEDGER_HTTP_PORT,
    identityKeys,
    bus,
    budgetRefreshMs: config.LEDGER_BUDGET_REFRESH_MS,
    stripe: stripeSettingsOf(config),
    fees: feeScheduleOf(config),
  });
  log.info({ grpcPort: ledger.grpcPort, httpPort: ledger.httpPort, metricsPort: ledger.metricsPort }, "ledger.started");

  // Handlers finish and commit first; the bus then flushes its outbox; the store closes last.
  stopOnSignals(log, "ledger", [
    { step: "ledger", run: () => ledger.close() },
    { step: "bus", run: () => bus.close() },
    { step: "store", run: () => store.close() },
    { step: "tracing", run: () => tracing.shutdown() },
  ]);
}

main().catch(exitOnStartFailure("ledger"));
