import { busEnvironment, checkBusEnvironment } from "@router/bus";
import { env, resolveSecrets, z, type Secrets } from "@router/config";
import { DEFAULT_KEEPALIVE_MS } from "./ingress/sse-response";
import { DEFAULT_TIMEOUTS, type UpstreamTimeouts } from "./dispatch/upstream-client";
import type { RegionHeaders } from "./meta/region-route";
import { DEFAULT_STORED_RESPONSE_DAYS } from "./stored-responses/stored-response-store";
import { fromUsd } from "@router/money";
import { trustedProxies } from "./rate-limits/client-address";
import type { RateTier } from "./rate-limits/inference-tiers";
import { DAY, LIMIT_NAMES, MINUTE, type LimitName, type RateLimitOverrides, type RateWindow } from "./rate-limits/limits";

/**
 * Provider calls: how long to wait for a connection, for response headers (non-stream, stream) and
 * between two chunks before the attempt counts as a timeout and the cascade moves on; and the quiet
 * time after which a waiting stream gets a keepalive comment. The one-process runner reads them too.
 */
export const upstreamEnvironment = {
  GATEWAY_UPSTREAM_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(1).max(600_000).default(DEFAULT_TIMEOUTS.connectMs),
  GATEWAY_UPSTREAM_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(1).max(3_600_000).default(DEFAULT_TIMEOUTS.headersMs),
  GATEWAY_UPSTREAM_STREAM_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(1).max(3_600_000).default(DEFAULT_TIMEOUTS.streamHeadersMs),
  GATEWAY_UPSTREAM_IDLE_TIMEOUT_MS: z.coerce.number().int().min(1).max(3_600_000).default(DEFAULT_TIMEOUTS.idleMs),
  GATEWAY_STREAM_KEEPALIVE_MS: z.coerce.number().int().min(100).max(600_000).default(DEFAULT_KEEPALIVE_MS),
  // How long a stopping gateway lets requests in flight finish (keep below the pod's termination grace).
  GATEWAY_DRAIN_GRACE_MS: z.coerce.number().int().min(0).max(3_600_000).default(20_000),
};

type UpstreamEnv = { [K in keyof typeof upstreamEnvironment]: z.infer<(typeof upstreamEnvironment)[K]> };

/** The `startGateway` options the upstream settings give. */
export function upstreamOptionsOf(config: UpstreamEnv): { upstreamTimeouts: UpstreamTimeouts; keepaliveMs: number; drainGraceMs: number } {
  return {
    upstreamTimeouts: {
      connectMs: config.GATEWAY_UPSTREAM_CONNECT_TIMEOUT_MS,
      headersMs: config.GATEWAY_UPSTREAM_HEADERS_TIMEOUT_MS,
      streamHeadersMs: config.GATEWAY_UPSTREAM_STREAM_HEADERS_TIMEOUT_MS,
      idleMs: config.GATEWAY_UPSTREAM_IDLE_TIMEOUT_MS,
    },
    keepaliveMs: config.GATEWAY_STREAM_KEEPALIVE_MS,
    drainGraceMs: config.GATEWAY_DRAIN_GRACE_MS,
  };
}

/**
 * Stored responses (`store` on POST /v1/responses): how many days one is kept before it is purged.
 * The one-process runner reads it too.
 */
export const storedResponseEnvironment = {
  GATEWAY_STORED_RESPONSE_DAYS: z.coerce.number().int().min(1).max(3650).default(DEFAULT_STORED_RESPONSE_DAYS),
};

type StoredResponseEnv = { [K in keyof typeof storedResponseEnvironment]: z.infer<(typeof storedResponseEnvironment)[K]> };

/** The `startGateway` options the stored-response settings give. */
export function storedResponseOptionsOf(config: StoredResponseEnv): { storedResponseDays: number } {
  return { storedResponseDays: config.GATEWAY_STORED_RESPONSE_DAYS };
}

/** One limit's windows in `GATEWAY_RATE_LIMITS`: `{"per_minute": 600, "per_day": 50000}`. */
const windowsOverride = z
  .object({
    per_second: z.number().int().min(1).optional(),
    per_minute: z.number().int().min(1).optional(),
    per_hour: z.number().int().min(1).optional(),
    per_day: z.number().int().min(1).optional(),
  })
  .strict()
  .refine((w) => Object.values(w).some((v) => v !== undefined), "give at least one of per_second, per_minute, per_hour, per_day");

const WINDOW_SECONDS = { per_second: 1, per_minute: MINUTE, per_hour: 3600, per_day: DAY } as const;
const WINDOW_FIELDS = Object.keys(WINDOW_SECONDS) as Array<keyof typeof WINDOW_SECONDS>;

const rateLimitOverrides = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: "custom", message: "expected a JSON object of limit names" });
      return z.NEVER;
    }
  })
  .pipe(z.partialRecord(z.enum(LIMIT_NAMES as [LimitName, ...LimitName[]]), windowsOverride))
  .transform((byName): RateLimitOverrides => {
    const out: RateLimitOverrides = {};
    for (const [name, w] of Object.entries(byName) as Array<[LimitName, z.infer<typeof windowsOverride>]>) {
      const windows: RateWindow[] = [];
      for (const [field, seconds] of Object.entries(WINDOW_SECONDS) as Array<[keyof typeof WINDOW_SECONDS, number]>) {
        const points = w[field];
        if (points !== undefined) windows.push({ points, seconds });
      }
      out[name] = windows;
    }
    return out;
  });

/**
 * `ROUTER_RATE_TIERS`: request-rate ceilings on inference by lifetime credit purchase, a JSON array
 * of tiers, lowest first: `[{"purchased": 0, "per_minute": 20}, {"purchased": 10, "per_minute": 200,
 * "per_day": 50000}]` (`purchased` in USD). The first is for 0 (every organisation has a tier); each
 * names the same windows as the first, with at least as many requests as the tier before (a top-up
 * never lowers a ceiling).
 */
const rateTiers = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: "custom", message: "expected a JSON array of tiers" });
      return z.NEVER;
    }
  })
  .pipe(
    z
      .array(
        z
          .object({
            purchased: z.number().min(0).max(1e9),
            per_second: z.number().int().min(1).optional(),
            per_minute: z.number().int().min(1).optional(),
            per_hour: z.number().int().min(1).optional(),
            per_day: z.number().int().min(1).optional(),
          })
          .strict()
          .refine((t) => WINDOW_FIELDS.some((f) => t[f] !== undefined), "give at least one of per_second, per_minute, per_hour, per_day"),
      )
      .min(1, "give at least one tier")
      .max(20)
      .superRefine((tiers, ctx) => {
        if (tiers[0] && tiers[0].purchased !== 0) ctx.addIssue({ code: "custom", path: [0, "purchased"], message: "the first tier is for 0 (every organisation has one)" });
        for (let i = 1; i < tiers.length; i++) {
          const [before, tier] = [tiers[i - 1]!, tiers[i]!];
          if (tier.purchased <= before.purchased) ctx.addIssue({ code: "custom", path: [i, "purchased"], message: "tiers go from the lowest purchase up" });
          for (const f of WINDOW_FIELDS) {
            if ((tier[f] === undefined) !== (tiers[0]![f] === undefined)) ctx.addIssue({ code: "custom", path: [i, f], message: "every tier names the windows of the first" });
            else if (tier[f] !== undefined && tier[f] < before[f]!) ctx.addIssue({ code: "custom", path: [i, f], message: "a higher tier allows at least as many requests" });
          }
        }
      }),
  )
  .transform((tiers): RateTier[] =>
    tiers.map((t) => ({
      purchased: fromUsd(t.purchased),
      windows: WINDOW_FIELDS.filter((f) => t[f] !== undefined).map((f) => ({ points: t[f]!, seconds: WINDOW_SECONDS[f] })),
    })),
  );

/**
 * Rate limits (src/rate-limits): the proxies whose `X-Forwarded-For` is believed, the Redis key
 * prefix, replaced limits and the inference tiers. The one-process runner reads them too.
 */
export const rateLimitEnvironment = {
  // Comma-separated addresses or CIDRs (or loopback, linklocal, uniquelocal); unset trusts nothing.
  GATEWAY_TRUSTED_PROXIES: z
    .string()
    .default("")
    .transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean))
    .superRefine((list, ctx) => {
      try {
        trustedProxies(list);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: `expected addresses or CIDRs: ${err instanceof Error ? err.message : String(err)}` });
      }
    }),
  GATEWAY_RATE_LIMIT_PREFIX: z.string().regex(/^[A-Za-z0-9:_.-]{1,64}$/, "letters, digits, ':', '_', '.', '-'").default("router:rl"),
  GATEWAY_RATE_LIMITS: rateLimitOverrides.optional(),
  ROUTER_RATE_TIERS: rateTiers.optional(),
};

type RateLimitEnv = z.infer<z.ZodObject<typeof rateLimitEnvironment>>;

/** The `startGateway` options the rate-limit settings give. */
export function rateLimitOptionsOf(config: RateLimitEnv): {
  trustedProxies: string[];
  rateLimitPrefix: string;
  rateLimits: RateLimitOverrides;
  rateTiers: RateTier[];
} {
  return {
    trustedProxies: config.GATEWAY_TRUSTED_PROXIES,
    rateLimitPrefix: config.GATEWAY_RATE_LIMIT_PREFIX,
    rateLimits: config.GATEWAY_RATE_LIMITS ?? {},
    rateTiers: config.ROUTER_RATE_TIERS ?? [],
  };
}

/** Where the runaway service listens unless told otherwise (its RUNAWAY_HTTP_PORT default). */
export const DEFAULT_RUNAWAY_HTTP_URL = "http://127.0.0.1:8087";
export const DEFAULT_CONSOLE_HTTP_URL = "http://127.0.0.1:8088";

/** The edge headers `GET /v1/region` trusts; the one-process runner reads them too. */
export const regionEnvironment = {
  GATEWAY_REGION_HEADER: z.string().regex(/^[A-Za-z0-9-]+$/, "a header name").optional(),
  GATEWAY_SUBDIVISION_HEADER: z.string().regex(/^[A-Za-z0-9-]+$/, "a header name").optional(),
};

export function regionOptionsOf(config: z.infer<z.ZodObject<typeof regionEnvironment>>): { regionHeaders: RegionHeaders } {
  return { regionHeaders: { region: config.GATEWAY_REGION_HEADER, subdivision: config.GATEWAY_SUBDIVISION_HEADER } };
}

/** Every environment variable the gateway reads (README lists them with their meaning). */
export const gatewayConfigSchema = z.object({
  PORT: env.port(8080),
  // Loopback unless told otherwise; containers set HOST=0.0.0.0.
  HOST: z.string().default("127.0.0.1"),
  // The admin listener for Prometheus: never the public port; loopback unless a scraper must reach it.
  GATEWAY_METRICS_PORT: env.port(9464),
  METRICS_HOST: z.string().default("127.0.0.1"),
  // Unset: one embedded PGlite under ROUTER_DATA_DIR.
  DATABASE_URL: z.string().optional(),
  // false (production): only check the schema is at the latest migration; `router migrate` applies them.
  ROUTER_MIGRATE_ON_START: env.bool(true),
  ...busEnvironment,
  ROUTING_GRPC_ADDR: z.string().default("127.0.0.1:50051"),
  CONSOLE_GRPC_ADDR: z.string().default("127.0.0.1:50053"),
  LEDGER_GRPC_ADDR: z.string().default("127.0.0.1:50052"),
  ROUTING_HTTP_URL: z.string().url().default("http://127.0.0.1:8082"),
  ACTIVITY_HTTP_URL: z.string().url().default("http://127.0.0.1:8083"),
  LEDGER_HTTP_URL: z.string().url().default("http://127.0.0.1:8085"),
  REPORTS_HTTP_URL: z.string().url().default("http://127.0.0.1:8089"),
  ALERTS_HTTP_URL: z.string().url().default("http://127.0.0.1:8084"),
  BROADCAST_HTTP_URL: z.string().url().default("http://127.0.0.1:8086"),
  RUNAWAY_HTTP_URL: z.string().url().default(DEFAULT_RUNAWAY_HTTP_URL),
  CONSOLE_HTTP_URL: z.string().url().default(DEFAULT_CONSOLE_HTTP_URL),
  ROUTER_DATA_DIR: z.string().default("./.data"),
  // Unset: <ROUTER_DATA_DIR>/outbox/gateway.
  ROUTER_OUTBOX_DIR: z.string().optional(),
  GRPC_DEADLINE_MS: z.coerce.number().int().min(1).max(60_000).default(1000),
  GATEWAY_PLAN_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  // How long one spend lease admits requests under hard ceilings; 0 sends every one to Admit.
  GATEWAY_LEASE_USE_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  // How many long-lived AdmitStream streams carry Admit to the ledger; 0 sends each as a unary call.
  GATEWAY_LEDGER_ADMIT_STREAMS: z.coerce.number().int().min(0).max(64).default(4),
  // How often the holds and leases of requests running here are renewed at the ledger; keep it well
  // under LEDGER_HOLD_TTL_MS (60 s), past which the ledger ends them as lost with this gateway.
  GATEWAY_HOLD_RENEW_MS: z.coerce.number().int().min(100).max(600_000).default(15_000),
  ...upstreamEnvironment,
  ...storedResponseEnvironment,
  ...rateLimitEnvironment,
  ...regionEnvironment,
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  NODE_ENV: z.string().optional(),
}).superRefine(checkBusEnvironment);

export type GatewayEnv = z.infer<typeof gatewayConfigSchema>;


/**
 * The edge's secrets: the key pepper, the master key, its own cookie and CSRF key
 * (`ROUTER_INTERNAL_SECRET`) and the private key it signs forwarded identities with. Not the public
 * identity keys: the gateway verifies no identity.
 */
export const GATEWAY_SECRET_NAMES = ["ROUTER_KEY_PEPPER", "ROUTER_INTERNAL_SECRET", "ROUTER_MASTER_KEY", "ROUTER_IDENTITY_SIGNING_KEY"] as const;
export type GatewaySecretName = (typeof GATEWAY_SECRET_NAMES)[number];
export type GatewaySecrets = Pick<Secrets, GatewaySecretName>;

/**
 * The gateway's secrets. Generated into ROUTER_DATA_DIR only outside production, so an embedded
 * install works on a fresh clone and the CLI reads the same values.
 */
export function gatewaySecrets(
  config: GatewayEnv,
  environment: NodeJS.ProcessEnv,
): { secrets: GatewaySecrets; generated: GatewaySecretName[] } {
  return resolveSecrets(environment, config.ROUTER_DATA_DIR, { allowGenerated: config.NODE_ENV !== "production", names: GATEWAY_SECRET_NAMES });
}
