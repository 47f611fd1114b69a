import { env, z } from "@router/config";

/** The activity service's settings, read from the environment once in main.ts. */
export const activityConfigSchema = z
  .object({
    /** Postgres URL; unset runs on embedded PGlite under ROUTER_DATA_DIR/pg. */
    DATABASE_URL: z.string().optional(),
    /** Embedded state: PGlite files, generated secrets, the bus outbox. */
    ROUTER_DATA_DIR: z.string().default(".data"),
    ROUTER_BUS: z.enum(["memory", "redis", "kafka"]).default("memory"),
    ROUTER_BUS_NAMESPACE: z.string().regex(/^[a-zA-Z0-9_-]+$/).optional(),
    REDIS_URL: z.string().optional(),
    /** Comma-separated host:port list. */
    KAFKA_BROKERS: env.list().optional(),
    ACTIVITY_HTTP_PORT: env.port(8083),
    /** Internal port: loopback unless the deployment puts it on a private network. */
    ACTIVITY_HOST: z.string().default("127.0.0.1"),
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

export type ActivityConfig = z.infer<typeof activityConfigSchema>;
