import { busEnvironment, checkBusEnvironment } from "@router/bus";
import { env, z } from "@router/config";

/** The activity service's settings, read from the environment once in main.ts. */
export const activityConfigSchema = z
  .object({
    /** Postgres URL; unset runs on embedded PGlite under ROUTER_DATA_DIR/pg. */
    DATABASE_URL: z.string().optional(),
    /**
     * false (production): the service only checks that its schema is at the latest migration and
     * refuses to start if not; `router migrate` applies them, as the owner, and its role has no DDL rights.
     */
    ROUTER_MIGRATE_ON_START: env.bool(true),
    /** Embedded state: PGlite files, generated secrets, the bus outbox. */
    ROUTER_DATA_DIR: z.string().default(".data"),
    ...busEnvironment,
    ACTIVITY_HTTP_PORT: env.port(8083),
    /** Internal port: loopback unless the deployment puts it on a private network. */
    ACTIVITY_HOST: z.string().default("127.0.0.1"),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  })
  .superRefine(checkBusEnvironment);

export type ActivityConfig = z.infer<typeof activityConfigSchema>;
