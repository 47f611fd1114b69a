import { kafkaTopicEnvironment } from "@router/bus";
import { env, loadConfig, z } from "@router/config";

/** The schemas `router migrate` applies, in order: one per service, each with its own login role. */
export const SERVICE_SCHEMAS = ["gateway", "console", "routing", "ledger", "activity", "reports", "alerts", "broadcast", "runaway"] as const;

/** Printable ASCII only: Postgres normalises a password (SASLprep), which leaves exactly that as it is. */
const rolePassword = z
  .string()
  .regex(/^[\x21-\x7e]{16,200}$/, "16 to 200 printable ASCII characters, no spaces (openssl rand -base64 32)")
  .optional();

/** ROUTER_DB_PASSWORD_<SERVICE>: `router migrate` sets that service's role's password to it. */
const rolePasswords = Object.fromEntries(SERVICE_SCHEMAS.map((s) => [`ROUTER_DB_PASSWORD_${s.toUpperCase()}`, rolePassword])) as Record<
  `ROUTER_DB_PASSWORD_${Uppercase<(typeof SERVICE_SCHEMAS)[number]>}`,
  typeof rolePassword
>;

/** Settings the CLI shares with the services it acts for. */
export const cliConfigSchema = z.object({
  /** `router migrate` connects as the schemas' owner (the migrator); other commands as the service they act for. */
  DATABASE_URL: z.string().optional(),
  /** false: commands only check that a schema is at the latest migration (their role cannot apply one). */
  ROUTER_MIGRATE_ON_START: env.bool(true),
  /** The services' login roles are `<prefix><service>`: router_gateway, router_routing, ... */
  ROUTER_DB_ROLE_PREFIX: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,40}$/, "lower-case letters, digits and _ (at most 41), starting with a letter or _")
    .default("router_"),
  ...rolePasswords,
  /** The gateway's POST /v1/status/probes token, for `router probe`. */
  ROUTER_PROBE_TOKEN: z.string().optional(),
  ROUTER_DATA_DIR: z.string().default("./.data"),
  ROUTER_BUS: z.enum(["memory", "redis", "kafka"]).default("memory"),
  ROUTER_BUS_NAMESPACE: z.string().regex(/^[a-zA-Z0-9_-]+$/).optional(),
  REDIS_URL: z.string().optional(),
  KAFKA_BROKERS: z.string().optional(),
  LOG_LEVEL: z.string().default("warn"),
  ...kafkaTopicEnvironment,
});

export type CliConfig = z.infer<typeof cliConfigSchema>;

export const loadCliConfig = (env: NodeJS.ProcessEnv): CliConfig => loadConfig(cliConfigSchema, env);
