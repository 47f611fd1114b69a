import { busEnvironment, checkBusEnvironment } from "@router/bus";
import { env, z } from "@router/config";

/** The runaway service's settings, read from the environment once in main.ts. */
export const runawayConfigSchema = z
  .object({
    /** Postgres URL; unset runs on embedded PGlite under ROUTER_DATA_DIR/pg-runaway. */
    DATABASE_URL: z.string().optional(),
    /**
     * false (production): the service only checks that its schema is at the latest migration and
     * refuses to start if not; `router migrate` applies them, as the owner, and its role has no DDL rights.
     */
    ROUTER_MIGRATE_ON_START: env.bool(true),
    /** Embedded state: PGlite files, generated secrets, the bus outbox. */
    ROUTER_DATA_DIR: z.string().default(".data"),
    ...busEnvironment,
    RUNAWAY_HTTP_PORT: env.port(8087),
    /** Internal port: loopback unless the deployment puts it on a private network. */
    RUNAWAY_HOST: z.string().default("127.0.0.1"),
    /** Time between sweeps; the product's five minutes. Lowered only by tests. */
    RUNAWAY_SWEEP_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(300_000),
    /** The rule's spend floor in USD; the product's 5. Lowered only by tests. */
    RUNAWAY_MIN_SPEND_USD: z.coerce.number().positive().max(1_000_000).default(5),
    /** The rule's request floor; the product's 300. Lowered only by tests. */
    RUNAWAY_MIN_REQUESTS: z.coerce.number().int().min(1).max(10_000_000).default(300),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  })
  .superRefine(checkBusEnvironment);

export type RunawayConfig = z.infer<typeof runawayConfigSchema>;
