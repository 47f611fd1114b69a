import { startTracing } from "@router/tracing";
import { busConfigOf, createBus } from "@router/bus";
import { identityPublicKeys } from "@router/http-kit";
import { loadConfig, parseIdentityPublicKeys, serviceSecrets } from "@router/config";
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
  // The edge's public keys only: this service verifies the identity the gateway signs, and cannot sign one.
  const identityKeys = identityPublicKeys(
    parseIdentityPublicKeys(serviceSecrets(process.env, ["ROUTER_IDENTITY_PUBLIC_KEYS"], { dataDir: config.ROUTER_DATA_DIR, embedded: config.DATABASE_URL === undefined }).ROUTER_IDENTITY_PUBLIC_KEYS),
  );

  const store = await openServiceDb({ databaseUrl: config.DATABASE_URL, dataDir: config.ROUTER_DATA_DIR, schema: REPORTS_SCHEMA });
  const bus = await createBus(busConfigOf(config, { clientId: "reports", dataDir: config.ROUTER_DATA_DIR, log }));
  const running = await startReports({
    db: store.db,
    migrateOnStart: config.ROUTER_MIGRATE_ON_START,
    bus,
    log,
    clock: systemClock,
    httpPort: config.REPORTS_HTTP_PORT,
    host: config.REPORTS_HOST,
    identityKeys,
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
