import { busConfigOf, createBus } from "@router/bus";
import { loadConfig, resolveSecrets } from "@router/config";
import { openServiceDb } from "@router/db";
import { createLogger, installProcessHandlers, stopOnSignals } from "@router/logging";
import { systemClock } from "@router/money";
import { REPORTS_SCHEMA, startReports } from "./app";
import { reportsConfigSchema, type ReportsConfig } from "./config";

/**
 * Only the internal secret matters here. A deployment sets it (reports need not hold the key
 * pepper or master key); the embedded default shares the one generated under ROUTER_DATA_DIR.
 */
function internalSecret(config: ReportsConfig): string {
  if (config.ROUTER_INTERNAL_SECRET) return config.ROUTER_INTERNAL_SECRET;
  if (config.DATABASE_URL !== undefined) {
    throw new Error("ROUTER_INTERNAL_SECRET must be set: it verifies the identity the gateway forwards");
  }
  return resolveSecrets(process.env, config.ROUTER_DATA_DIR, { allowGenerated: true }).secrets.ROUTER_INTERNAL_SECRET;
}

async function main(): Promise<void> {
  const config = loadConfig(reportsConfigSchema);
  const log = createLogger({ level: config.LOG_LEVEL, base: { service: "reports" } });
  installProcessHandlers(log);
  const secret = internalSecret(config);

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

  stopOnSignals(log, "reports", async () => {
    await running.close();
    await bus.close();
    await store.close();
  });
}

main().catch((err: unknown) => {
  createLogger({ base: { service: "reports" } }).fatal({ err }, "reports.start_failed");
  process.exit(1);
});
