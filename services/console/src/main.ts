import { startTracing } from "@router/tracing";
import { loadConfig, parseIdentityPublicKeys, serviceSecrets } from "@router/config";
import { identityPublicKeys } from "@router/http-kit";
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

  const secrets = serviceSecrets(process.env, ["ROUTER_IDENTITY_PUBLIC_KEYS", "ROUTER_MASTER_KEY"], { dataDir: cfg.ROUTER_DATA_DIR, embedded: cfg.DATABASE_URL === undefined });
  // The edge's public keys only: this service verifies the identity the gateway signs, and cannot sign one.
  const identityKeys = identityPublicKeys(parseIdentityPublicKeys(secrets.ROUTER_IDENTITY_PUBLIC_KEYS));

  const store = await openServiceDb({ databaseUrl: cfg.DATABASE_URL, dataDir: cfg.ROUTER_DATA_DIR, schema: "console" });
  const running = await startConsole({
    db: store.db,
    migrateOnStart: cfg.ROUTER_MIGRATE_ON_START,
    log,
    clock: systemClock,
    httpPort: cfg.CONSOLE_HTTP_PORT,
    grpcPort: cfg.CONSOLE_GRPC_PORT,
    identityKeys,
    masterKey: secrets.ROUTER_MASTER_KEY,
    host: cfg.CONSOLE_HOST,
    probeToken: cfg.ROUTER_PROBE_TOKEN,
    dashboardDir: cfg.CONSOLE_DASHBOARD_DIR,
    gatewayUrl: cfg.CONSOLE_GATEWAY_URL,
  });
  log.info({ httpPort: running.httpPort, grpcPort: running.grpcPort, database: store.describe }, "console.listening");

  stopOnSignals(log, "console", [
    { step: "console", run: () => running.close() },
    { step: "store", run: () => store.close() },
    { step: "tracing", run: () => tracing.shutdown() },
  ]);
}

main().catch(exitOnStartFailure("console"));
