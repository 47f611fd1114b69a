import { busEnvironment, checkBusEnvironment } from "@router/bus";
import { env, z } from "@router/config";
import { outboundEnvironment } from "@router/outbound";

/** The broadcast service's settings, read from the environment once in main.ts. */
export const broadcastConfigSchema = z
  .object({
    /** Postgres URL; unset runs on embedded PGlite under ROUTER_DATA_DIR/pg-broadcast. */
    DATABASE_URL: z.string().optional(),
    /**
     * false (production): the service only checks that its schema is at the latest migration and
     * refuses to start if not; `router migrate` applies them, as the owner, and its role has no DDL rights.
     */
    ROUTER_MIGRATE_ON_START: env.bool(true),
    /** Embedded state: PGlite files, generated secrets, the bus outbox. */
    ROUTER_DATA_DIR: z.string().default(".data"),
    ...busEnvironment,
    BROADCAST_HTTP_PORT: env.port(8086),
    /** Internal port: loopback unless the deployment puts it on a private network. */
    BROADCAST_HOST: z.string().default("127.0.0.1"),
    /** How long a handled event is remembered, so a replay within it never delivers again. */
    BROADCAST_DEDUPE_RETENTION_HOURS: z.coerce.number().int().min(1).max(24 * 365).default(168),
    ...outboundEnvironment,
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  })
  .superRefine(checkBusEnvironment);

export type BroadcastConfig = z.infer<typeof broadcastConfigSchema>;
