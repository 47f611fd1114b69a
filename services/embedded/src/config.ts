import { env, formerSignInSettings, loadConfig, withCurrentNames, z } from "@router/config";
import { alertsEnvironment, checkAlertsEnvironment } from "@router/alerts";
import { busEnvironment, checkBusEnvironment } from "@router/bus";
import { pkceEnvironment, signInEnvironment } from "@router/console";
import { rateLimitEnvironment, storedResponseEnvironment, regionEnvironment, upstreamEnvironment } from "@router/gateway";
import { feeEnvironment, stripeEnvironment } from "@router/ledger";
import { outboundEnvironment } from "@router/outbound";

/**
 * The one-process default. Every setting is optional: with none, the stack runs on embedded PGlite,
 * in-memory caches and the in-process bus, with secrets generated once under ROUTER_DATA_DIR.
 */
export const embeddedConfigSchema = z.object({
  PORT: env.port(8080),
  ROUTER_PUBLIC_URL: z.string().url().optional(),
  HOST: z.string().default("127.0.0.1"),
  ROUTER_DATA_DIR: z.string().default("./.data"),
  DATABASE_URL: z.string().optional(),
  /** The bus (in-process unless set), its broker and batching, as every standalone service takes them. */
  ...busEnvironment,
  LOG_LEVEL: z.string().default("info"),
  GRPC_DEADLINE_MS: env.int(1000),
  /** The gateway's Prometheus metrics (`GET /metrics`), kept off the public port. */
  METRICS_PORT: env.port(9464),
  METRICS_HOST: z.string().default("127.0.0.1"),
  /** Provider timeouts and the stream keepalive, as the standalone gateway takes them. */
  ...upstreamEnvironment,
  /** Ceiling and lifetime of keys issued to apps through OAuth PKCE, as the standalone console takes them. */
  ...pkceEnvironment,
  /** How long stored responses (`store` on POST /v1/responses) are kept, as the standalone gateway takes it. */
  ...storedResponseEnvironment,
  /** Trusted proxies (X-Forwarded-For), the Redis key prefix and replaced limits, as the standalone gateway takes them. */
  ...rateLimitEnvironment,
  /** Identity providers and wallet sign-in, as the standalone console takes them. */
  ...signInEnvironment,
  ...regionEnvironment,
  /** Alert channels' chat host and mail server, as the standalone alerts service takes them. */
  ...alertsEnvironment,
  /** Outbound delivery tuning (and the test-only overrides), as the standalone alerts and broadcast services take them. */
  ...outboundEnvironment,
  /** The payment processor (credits), as the standalone ledger takes it. */
  ...stripeEnvironment,
  /** The operator's fee schedule (credits), as the standalone ledger takes it. */
  ...feeEnvironment,
})
  .superRefine(checkBusEnvironment)
  .superRefine(checkAlertsEnvironment);

export type EmbeddedConfig = z.infer<typeof embeddedConfigSchema>;

/** The settings, sign-in ones given under the gateway's former names read as the console's (start-up warns of each). */
export const loadEmbeddedConfig = (e: NodeJS.ProcessEnv): EmbeddedConfig => loadConfig(embeddedConfigSchema, withCurrentNames(e, formerSignInSettings(e)));

