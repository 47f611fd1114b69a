import { startTracing } from "@router/tracing";
import { busConfigOf, createBus } from "@router/bus";
import { identityPublicKeys } from "@router/http-kit";
import { loadConfig, parseIdentityPublicKeys, serviceSecrets } from "@router/config";
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
  // The edge's public keys only: this service verifies the identity the gateway signs, and cannot sign one.
  const identityKeys = identityPublicKeys(
    parseIdentityPublicKeys(serviceSecrets(process.env, ["ROUTER_IDENTITY_PUBLIC_KEYS"], { dataDir: cfg.ROUTER_DATA_DIR, embedded: cfg.DATABASE_URL === undefined }).ROUTER_IDENTITY_PUBLIC_KEYS),
  );

  const store = await openServiceDb({ databaseUrl: cfg.DATABASE_URL, dataDir: cfg.ROUTER_DATA_DIR, schema: "activity" });
  const bus = await createBus(busConfigOf(cfg, { clientId: "activity", dataDir: cfg.ROUTER_DATA_DIR, log }));
  const running = await startActivity({
    db: store.db,
    migrateOnStart: cfg.ROUTER_MIGRATE_ON_START,
    bus,
    log,
    clock: systemClock,
    httpPort: cfg.ACTIVITY_HTTP_PORT,
    host: cfg.ACTIVITY_HOST,
    identityKeys,
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
