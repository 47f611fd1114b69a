import { env, z } from "@router/config";

/** The routing service's settings; every key is described in services/routing/README.md. */
export const RoutingConfig = z
  .object({
    /** Postgres URL; unset means embedded PGlite under ROUTER_DATA_DIR. */
    DATABASE_URL: z.string().optional(),
    /** Embedded state: PGlite files and the bus outbox. */
    ROUTER_DATA_DIR: z.string().default("./.data"),
    ROUTER_BUS: z.enum(["memory", "redis", "kafka"]).default("memory"),
    ROUTER_BUS_NAMESPACE: z.string().regex(/^[a-zA-Z0-9_-]+$/).optional(),
    REDIS_URL: z.string().optional(),
    /** Comma-separated host:port list. */
    KAFKA_BROKERS: env.list().optional(),
    ROUTING_HTTP_PORT: env.port(8082),
    ROUTING_GRPC_PORT: env.port(50051),
    ROUTING_HOST: z.string().default("127.0.0.1"),
    /** Catalog file imported on first start; defaults to the bundled catalog. */
    ROUTING_CATALOG_FILE: z.string().optional(),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  })
  .superRefine((c, ctx) => {
    if (c.ROUTER_BUS === "redis" && !c.REDIS_URL) {
      ctx.addIssue({ code: "custom", path: ["REDIS_URL"], message: "required when ROUTER_BUS=redis" });
    }
    if (c.ROUTER_BUS === "kafka" && (c.KAFKA_BROKERS ?? []).length === 0) {
      ctx.addIssue({ code: "custom", path: ["KAFKA_BROKERS"], message: "required when ROUTER_BUS=kafka" });
    }
  });

export type RoutingConfig = z.infer<typeof RoutingConfig>;

const OVERRIDE = /^ROUTER_PROVIDER_([A-Z0-9_]+)_BASE_URL$/;

/**
 * Provider base URL overrides from `ROUTER_PROVIDER_<SLUG>_BASE_URL` (slug upper-cased, `-` as
 * `_`), keyed by lower-case slug. Throws naming the variable when a value is not an http(s) URL.
 */
export function providerBaseUrls(environment: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(environment)) {
    const m = OVERRIDE.exec(name);
    if (!m?.[1] || !value) continue;
    if (!z.url({ protocol: /^https?$/ }).safeParse(value).success) {
      throw new Error(`invalid configuration: ${name}: must be an http(s) URL`);
    }
    out[m[1].toLowerCase()] = value.replace(/\/+$/, "");
  }
  return out;
}
