import { env, z } from "@router/config";

/** The ledger's settings, read once from the environment by main.ts. */
export const ledgerConfigSchema = z.object({
  /** Postgres URL; unset runs on the embedded PGlite under ROUTER_DATA_DIR. */
  DATABASE_URL: z.string().min(1).optional(),
  /** Where embedded state lives when DATABASE_URL is unset. */
  ROUTER_DATA_DIR: z.string().default(".data"),
  LEDGER_GRPC_PORT: env.port(50052),
  /** Interface the gRPC server binds; loopback unless other hosts must reach it. */
  LEDGER_HOST: z.string().default("127.0.0.1"),
  /** Port of the listener serving only GET /metrics (the ledger has no other HTTP port). */
  LEDGER_METRICS_PORT: env.port(9465),
  /** Interface the metrics listener binds; loopback unless a scraper on another host must reach it. */
  METRICS_HOST: z.string().default("127.0.0.1"),
  /** How long a hold reserves its worst case before the sweep releases it (a crashed gateway). */
  LEDGER_HOLD_TTL_MS: z.coerce.number().int().positive().default(15 * 60_000),
  /** How often expired holds are released. */
  LEDGER_SWEEP_INTERVAL_MS: z.coerce.number().int().positive().default(30_000),
  /**
   * How long a lease reserves before the sweep releases it, unless a trim extends it: a gateway that
   * crashed mid-lease pins its share of a ceiling for at most this long.
   */
  LEDGER_LEASE_TTL_MS: z.coerce.number().int().positive().default(60_000),
  /**
   * A lease takes at most 1/N of a ceiling's headroom (what is left under its limit), so several
   * gateways share it and Admit keeps some.
   */
  LEDGER_LEASE_SHARE: z.coerce.number().int().min(1).default(4),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

export type LedgerConfig = z.infer<typeof ledgerConfigSchema>;
