import { join } from "node:path";
import { ConfigError, loadConfig } from "@router/config";
import { createPostgresDb, EmbeddedPostgres, type Db } from "@router/db";
import { createLogger, installProcessHandlers } from "@router/logging";
import { systemClock } from "@router/money";
import { startLedger } from "./app";
import { ledgerConfigSchema } from "./config";

async function main(): Promise<void> {
  const config = loadConfig(ledgerConfigSchema);
  const log = createLogger({ level: config.LOG_LEVEL, base: { service: "ledger" } });
  installProcessHandlers(log);

  let db: Db;
  let embedded: EmbeddedPostgres | undefined;
  if (config.DATABASE_URL) {
    db = createPostgresDb({ url: config.DATABASE_URL, schema: "ledger", applicationName: "router-ledger" });
  } else {
    embedded = await EmbeddedPostgres.open(join(config.ROUTER_DATA_DIR, "pg-ledger"));
    db = embedded.forSchema("ledger");
    log.info({ dataDir: config.ROUTER_DATA_DIR }, "ledger.db.embedded");
  }

  const ledger = await startLedger({
    db,
    log,
    clock: systemClock,
    grpcPort: config.LEDGER_GRPC_PORT,
    host: config.LEDGER_HOST,
    holdTtlMs: config.LEDGER_HOLD_TTL_MS,
    sweepIntervalMs: config.LEDGER_SWEEP_INTERVAL_MS,
    metricsPort: config.LEDGER_METRICS_PORT,
    metricsHost: config.METRICS_HOST,
  });
  log.info({ grpcPort: ledger.grpcPort, metricsPort: ledger.metricsPort }, "ledger.started");

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "ledger.stopping");
    void ledger
      .close()
      .then(() => db.close())
      .then(() => embedded?.close())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          log.error({ err }, "ledger.stop_failed");
          process.exit(1);
        },
      );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

main().catch((err: unknown) => {
  // The logger may not exist yet (bad config), so the failure goes to stderr as it is.
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
