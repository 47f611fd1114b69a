import { join } from "node:path";
import { createBus } from "@router/bus";
import { loadConfig, resolveSecrets } from "@router/config";
import { createPostgresDb, EmbeddedPostgres } from "@router/db";
import { createLogger, installProcessHandlers } from "@router/logging";
import { systemClock } from "@router/money";
import { startActivity } from "./app";
import { activityConfigSchema, type ActivityConfig } from "./config";

/**
 * Only the internal secret matters here. Taken from the environment when set, so a deployment need
 * not hand this service the key pepper or master key; otherwise the embedded default shares the
 * generated one kept under ROUTER_DATA_DIR.
 */
function internalSecret(cfg: ActivityConfig): string {
  const fromEnv = process.env.ROUTER_INTERNAL_SECRET;
  if (fromEnv) return fromEnv;
  const { secrets } = resolveSecrets(process.env, cfg.ROUTER_DATA_DIR, { allowGenerated: cfg.DATABASE_URL === undefined });
  return secrets.ROUTER_INTERNAL_SECRET;
}

async function main(): Promise<void> {
  const cfg = loadConfig(activityConfigSchema);
  const log = createLogger({ level: cfg.LOG_LEVEL, base: { service: "activity" } });
  installProcessHandlers(log);
  const secret = internalSecret(cfg);

  const embedded = cfg.DATABASE_URL ? null : await EmbeddedPostgres.open(join(cfg.ROUTER_DATA_DIR, "pg-activity"));
  const db = embedded
    ? embedded.forSchema("activity")
    : createPostgresDb({ url: cfg.DATABASE_URL ?? "", schema: "activity", applicationName: "router-activity" });
  const bus = await createBus({
    kind: cfg.ROUTER_BUS,
    clientId: "activity",
    namespace: cfg.ROUTER_BUS_NAMESPACE,
    redisUrl: cfg.REDIS_URL,
    kafkaBrokers: cfg.KAFKA_BROKERS,
    outboxDir: join(cfg.ROUTER_DATA_DIR, "outbox", "activity"),
    log,
  });
  const running = await startActivity({
    db,
    bus,
    log,
    clock: systemClock,
    httpPort: cfg.ACTIVITY_HTTP_PORT,
    host: cfg.ACTIVITY_HOST,
    internalSecret: secret,
  });
  log.info(
    { httpPort: running.httpPort, bus: cfg.ROUTER_BUS, database: embedded ? "embedded" : "postgres" },
    "activity.listening",
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "activity.stopping");
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
  createLogger({ base: { service: "activity" } }).fatal({ err }, "activity.start_failed");
  process.exit(1);
});
