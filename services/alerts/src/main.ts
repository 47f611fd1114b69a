import { startTracing } from "@router/tracing";
import { busConfigOf, createBus } from "@router/bus";
import { identityPublicKeys } from "@router/http-kit";
import { loadConfig, parseIdentityPublicKeys, serviceSecrets } from "@router/config";
import { openServiceDb } from "@router/db";
import { createLogger, exitOnStartFailure, installProcessHandlers, stopOnSignals } from "@router/logging";
import { systemClock } from "@router/money";
import { outboundOptionsOf } from "@router/outbound";
import { startAlerts } from "./app";
import { alertsConfigSchema } from "./config";

async function main(): Promise<void> {
  const cfg = loadConfig(alertsConfigSchema);
  const log = createLogger({ level: cfg.LOG_LEVEL, base: { service: "alerts" } });
  installProcessHandlers(log);
  // Off unless the standard OTEL_* settings ask for traces.
  const tracing = startTracing({ serviceName: "router-alerts" });
  const secrets = serviceSecrets(process.env, ["ROUTER_IDENTITY_PUBLIC_KEYS", "ROUTER_MASTER_KEY"], { dataDir: cfg.ROUTER_DATA_DIR, embedded: cfg.DATABASE_URL === undefined });
  const masterKey = secrets.ROUTER_MASTER_KEY;
  // The edge's public keys only: this service verifies the identity the gateway signs, and cannot sign one.
  const identityKeys = identityPublicKeys(parseIdentityPublicKeys(secrets.ROUTER_IDENTITY_PUBLIC_KEYS));

  const store = await openServiceDb({ databaseUrl: cfg.DATABASE_URL, dataDir: cfg.ROUTER_DATA_DIR, schema: "alerts" });
  const bus = await createBus(busConfigOf(cfg, { clientId: "alerts", dataDir: cfg.ROUTER_DATA_DIR, log }));
  const running = await startAlerts({
    db: store.db,
    migrateOnStart: cfg.ROUTER_MIGRATE_ON_START,
    bus,
    log,
    clock: systemClock,
    httpPort: cfg.ALERTS_HTTP_PORT,
    host: cfg.ALERTS_HOST,
    identityKeys,
    masterKey,
    outbound: outboundOptionsOf(cfg, { log }),
    chatHookHost: cfg.ALERTS_CHAT_HOOK_HOST,
    email: cfg.ALERTS_SMTP_URL && cfg.ALERTS_EMAIL_FROM ? { smtpUrl: cfg.ALERTS_SMTP_URL, from: cfg.ALERTS_EMAIL_FROM } : undefined,
    pruneIntervalMs: cfg.ALERTS_PRUNE_INTERVAL_MS,
  });
  log.info({ httpPort: running.httpPort, bus: cfg.ROUTER_BUS, database: store.describe }, "alerts.listening");

  // Handlers finish and commit first; the bus then flushes its outbox; the store closes last.
  stopOnSignals(log, "alerts", [
    { step: "alerts", run: () => running.close() },
    { step: "bus", run: () => bus.close() },
    { step: "store", run: () => store.close() },
    { step: "tracing", run: () => tracing.shutdown() },
  ]);
}

main().catch(exitOnStartFailure("alerts"));
