import { busEnvironment, checkBusEnvironment } from "@router/bus";
import { env, z } from "@router/config";

/** The routing service's settings; every key is described in services/routing/README.md. */
export const RoutingConfig = z
  .object({
    /** Postgres URL; unset means embedded PGlite under ROUTER_DATA_DIR. */
    DATABASE_URL: z.string().optional(),
    /**
     * false (production): the service only checks that its schema is at the latest migration and
     * refuses to start if not; `router migrate` applies them, as the owner, and its role has no DDL rights.
     */
    ROUTER_MIGRATE_ON_START: env.bool(true),
    /** Embedded state: PGlite files and the bus outbox. */
    ROUTER_DATA_DIR: z.string().default("./.data"),
    ...busEnvironment,
    ROUTING_HTTP_PORT: env.port(8082),
    ROUTING_GRPC_PORT: env.port(50051),
    ROUTING_HOST: z.string().default("127.0.0.1"),
    /**
     * Verifies the identity the gateway signs and forwards on management routes. Required with
     * DATABASE_URL; embedded, the one generated under ROUTER_DATA_DIR is shared.
     */
    ROUTER_IDENTITY_PUBLIC_KEYS: z.string().optional(),
    /** How long a sticky key's pins outlive its last use, in seconds (at most an hour). */
    ROUTING_STICKY_IDLE_TTL_SECONDS: z.coerce.number().int().min(1).max(3600).default(3600),
    /** Catalog file imported on first start; defaults to the bundled catalog. */
    ROUTING_CATALOG_FILE: z.string().optional(),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  })
  .superRefine(checkBusEnvironment);

export type RoutingConfig = z.infer<typeof RoutingConfig>;

