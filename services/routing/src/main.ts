import { startTracing } from "@router/tracing";
import { busConfigOf, createBus } from "@router/bus";
import { loadConfig, providerBaseUrls, resolveSecrets } from "@router/config";
import { openServiceDb } from "@router/db";
import { createLogger, installProcessHandlers, stopOnSignals } from "@router/logging";
import { systemClock } from "@router/money";
import { ROUTING_SCHEMA, startRouting } from "./app";
import { RoutingConfig } from "./config";

/**
 * Only the internal secret matters here. A deployment sets it (routing need not hold the key pepper
 * or master key); the embedded default shares the one generated under ROUTER_DATA_DIR.
 */
function internalSecret(config: RoutingConfig): string {
  if (config.ROUTER_INTERNAL_SECRET) return config.ROUTER_INTERNAL_SECRET;
  if (config.DATABASE_URL !== undefined) {
    throw new Error("ROUTER_INTERNAL_SECRET must be set: it verifies the identity the gateway forwards");
  }
  return resolveSecrets(process.env, config.ROUTER_DATA_DIR, { allowGenerated: true }).secrets.ROUTER_INTERNAL_SECRET;
}

async function main(): Promise<void> {
  const config = loadConfig(RoutingConfig);
  const log = createLogger({ level: config.LOG_LEVEL, base: { service: "routing" } });
  installProcessHandlers(log);
  // Off unless the standard OTEL_* settings ask for traces.
  const tracing = startTracing({ serviceName: "router-routing" });
  const secret = internalSecret(config);

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
    internalSecret: secret,
  });

  stopOnSignals(log, "routing", async () => {
    await running.close();
    await bus.close();
    await store.close();
    await tracing.shutdown();
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
