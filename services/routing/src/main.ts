import { busConfigOf, createBus } from "@router/bus";
import { loadConfig, providerBaseUrls } from "@router/config";
import { openServiceDb } from "@router/db";
import { createLogger, installProcessHandlers } from "@router/logging";
import { systemClock } from "@router/money";
import { ROUTING_SCHEMA, startRouting } from "./app";
import { RoutingConfig } from "./config";

async function main(): Promise<void> {
  const config = loadConfig(RoutingConfig);
  const log = createLogger({ level: config.LOG_LEVEL, base: { service: "routing" } });
  installProcessHandlers(log);

  const store = await openServiceDb({ databaseUrl: config.DATABASE_URL, dataDir: config.ROUTER_DATA_DIR, schema: ROUTING_SCHEMA });
  const db = store.db;
  log.info({ database: store.describe, bus: config.ROUTER_BUS }, "routing.stores");
  const bus = await createBus(busConfigOf(config, { clientId: "routing", dataDir: config.ROUTER_DATA_DIR, log }));

  const running = await startRouting({
    db,
    bus,
    log,
    clock: systemClock,
    httpPort: config.ROUTING_HTTP_PORT,
    grpcPort: config.ROUTING_GRPC_PORT,
    host: config.ROUTING_HOST,
    catalogFile: config.ROUTING_CATALOG_FILE,
    providerBaseUrls: providerBaseUrls(process.env),
  });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "routing.stopping");
    await running.close();
    await bus.close();
    await store.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
