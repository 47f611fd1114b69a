import { env, z } from "@router/config";

export const DEFAULT_GATEWAY_URL = "http://127.0.0.1:8080";

/** The console service's settings, read from the environment once in main.ts. */
export const consoleConfigSchema = z.object({
  /** Postgres URL; unset runs on embedded PGlite under ROUTER_DATA_DIR. */
  DATABASE_URL: z.string().optional(),
  /**
   * false (production): the service only checks that its schema is at the latest migration and
   * refuses to start if not; `router migrate` applies them, as the owner, and its role has no DDL rights.
   */
  ROUTER_MIGRATE_ON_START: env.bool(true),
  /** Embedded state: PGlite files and generated secrets. */
  ROUTER_DATA_DIR: z.string().default(".data"),
  CONSOLE_HTTP_PORT: env.port(8088),
  /** The ConsoleService (gRPC) the gateway asks for provider credentials (`CONSOLE_GRPC_ADDR` on the gateway). */
  CONSOLE_GRPC_PORT: env.port(50053),
  /** Internal port: loopback unless the deployment puts it on a private network. */
  CONSOLE_HOST: z.string().default("127.0.0.1"),
  /** The gateway the MCP tools call, as the MCP client: any replica (`http://gateway:8080` in a deployment). */
  CONSOLE_GATEWAY_URL: env.url().default(DEFAULT_GATEWAY_URL),
  /**
   * The bearer token of `POST /v1/status/probes`, where `router probe` reports uptime; unset refuses
   * every report. Only the probes and this service hold it.
   */
  ROUTER_PROBE_TOKEN: z.string().min(32, "at least 32 characters (openssl rand -base64 32)").optional(),
  /** The built dashboard (its `index.html` and `assets/`); default the package's own `dashboard/dist`. */
  CONSOLE_DASHBOARD_DIR: z.string().optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

export type ConsoleConfig = z.infer<typeof consoleConfigSchema>;
