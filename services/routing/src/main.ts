import { join } from "node:path";
import { createBus } from "@router/bus";
import { loadConfig } from "@router/config";
import { createPostgresDb, EmbeddedPostgres, type Db } from "@router/db";
import { createLogger, installProcessHandlers } from "@router/logging";
import { systemClock } from "@router/money";
import { ROUTING_SCHEMA, startRouting } from "./app";
import { providerBaseUrls, RoutingConfig } from "./config";

async function main(): Promise<void> {
  const config = loadConfig(RoutingConfig);
  const log = createLogger({ level: config.LOG_LEVEL, base: { service: "routing" } });
  installProcessHandlers(log);

  let db: Db;
  let embedded: EmbeddedPostgres | null = null;
  if (config.DATABASE_URL) {
    db = createPostgresDb({ url: config.DATABASE_URL, schema: ROUTING_SCHEMA });
  } else {
    const dir = join(config.ROUTER_DATA_DIR, "pg-routing");
    log.info({ dir }, "routing.embedded_postgres");
    embedded = await EmbeddedPostgres.open(dir);
    db = embedded.forSchema(ROUTING_SCHEMA);
  }

  const bus = await createBus({
    kind: config.ROUTER_BUS,
    clientId: "routing",
    namespace: config.ROUTER_BUS_NAMESPACE,
    redisUrl: config.REDIS_URL,
    kafkaBrokers: config.KAFKA_BROKERS,
    outboxDir: join(config.ROUTER_DATA_DIR, "outbox", "routing"),
    log,
  });

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
    await db.close();
    await embedded?.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
