import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createBus } from "@router/bus";
import { loadConfig } from "@router/config";
import { createPostgresDb, EmbeddedPostgres, type Db } from "@router/db";
import { CLIENT_OPTIONS, insecure } from "@router/grpc-kit";
import { createLogger, installProcessHandlers } from "@router/logging";
import { systemClock } from "@router/money";
import { ledger, routing } from "@router/proto";
import { ensureOperatorOrganisation, GATEWAY_SCHEMA, migrateGateway, startGateway } from "./app";
import { gatewayConfigSchema, gatewaySecrets, providerBaseUrls } from "./config";

async function main(): Promise<void> {
  const config = loadConfig(gatewayConfigSchema, process.env);
  const log = createLogger({ level: config.LOG_LEVEL, base: { service: "gateway" } });
  installProcessHandlers(log);
  const version = (JSON.parse(readFileSync(join(__dirname, "..", "package.json"), "utf8")) as { version: string }).version;
  const { secrets, generated } = gatewaySecrets(config, process.env);
  const baseUrls = providerBaseUrls(process.env);

  const embedded: string[] = [];
  let pglite: EmbeddedPostgres | null = null;
  let db: Db;
  if (config.DATABASE_URL) {
    db = createPostgresDb({ url: config.DATABASE_URL, schema: GATEWAY_SCHEMA, applicationName: "router-gateway" });
  } else {
    pglite = await EmbeddedPostgres.open(join(config.ROUTER_DATA_DIR, "pg-gateway"));
    db = pglite.forSchema(GATEWAY_SCHEMA);
    embedded.push("database (PGlite under ROUTER_DATA_DIR)");
  }
  if (!config.REDIS_URL) embedded.push("rate limits and caches (in memory, per instance)");
  if (config.ROUTER_BUS === "memory") embedded.push("event bus (in process)");
  if (generated.length > 0) embedded.push(`secrets generated into ROUTER_DATA_DIR (${generated.join(", ")})`);
  if (embedded.length > 0) log.info({ embedded }, "gateway.embedded_defaults");

  const bus = await createBus({
    kind: config.ROUTER_BUS,
    clientId: "gateway",
    namespace: config.ROUTER_BUS_NAMESPACE,
    redisUrl: config.REDIS_URL,
    kafkaBrokers: config.KAFKA_BROKERS,
    outboxDir: config.ROUTER_OUTBOX_DIR ?? join(config.ROUTER_DATA_DIR, "outbox", "gateway"),
    log,
  });
  const routingClient = new routing.RoutingServiceClient(config.ROUTING_GRPC_ADDR, insecure(), CLIENT_OPTIONS);
  const ledgerClient = new ledger.LedgerServiceClient(config.LEDGER_GRPC_ADDR, insecure(), CLIENT_OPTIONS);

  await migrateGateway(db);
  const operator = await ensureOperatorOrganisation(db, secrets.ROUTER_KEY_PEPPER, systemClock);
  if (operator.created) {
    // Printed once, to the terminal and not the log stream, because it is a credential.
    process.stdout.write(
      `\nOperator organisation created. Its management key (shown once, store it now):\n\n  ${operator.managementKey}\n\n`,
    );
  }

  const gateway = await startGateway({
    db,
    bus,
    log,
    clock: systemClock,
    port: config.PORT,
    host: config.HOST,
    secrets,
    routing: routingClient,
    ledger: ledgerClient,
    activityUrl: config.ACTIVITY_HTTP_URL,
    routingUrl: config.ROUTING_HTTP_URL,
    providerBaseUrls: baseUrls,
    redisUrl: config.REDIS_URL,
    grpcDeadlineMs: config.GRPC_DEADLINE_MS,
    planCacheMs: config.GATEWAY_PLAN_CACHE_MS,
    version,
  });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "gateway.stopping");
    await gateway.close();
    routingClient.close();
    ledgerClient.close();
    await bus.close();
    await db.close();
    await pglite?.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

main().catch((err: unknown) => {
  process.stderr.write(`gateway failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
