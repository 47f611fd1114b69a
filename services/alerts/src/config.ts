import { busEnvironment, checkBusEnvironment } from "@router/bus";
import { env, z } from "@router/config";
import { outboundEnvironment } from "@router/outbound";

/** The common chat tool's incoming-webhook host. */
export const DEFAULT_CHAT_HOOK_HOST = "hooks.slack.com";

/** Where alerts may go: the chat tool's hook host and the mail server; spread into a config schema. */
export const alertsEnvironment = {
  /** A `chat` channel's target must be an incoming-webhook URL on this host. */
  ALERTS_CHAT_HOOK_HOST: z
    .string()
    .regex(/^[a-z0-9.-]+$/i, "a host name")
    .transform((h) => h.toLowerCase())
    .default(DEFAULT_CHAT_HOOK_HOST),
  /** SMTP server for `email` channels (`smtp://` or `smtps://`, credentials in the URL); unset: no email. */
  ALERTS_SMTP_URL: z
    .string()
    .url()
    .refine((u) => /^smtps?:\/\//.test(u), "must be an smtp:// or smtps:// URL")
    .optional(),
  /** The From address of alert email; required with ALERTS_SMTP_URL. */
  ALERTS_EMAIL_FROM: z.string().email().optional(),
};

/** A superRefine step: a mail server needs a From address. */
export function checkAlertsEnvironment(c: { ALERTS_SMTP_URL?: string; ALERTS_EMAIL_FROM?: string }, ctx: z.RefinementCtx): void {
  if (c.ALERTS_SMTP_URL !== undefined && c.ALERTS_EMAIL_FROM === undefined) {
    ctx.addIssue({ code: "custom", path: ["ALERTS_EMAIL_FROM"], message: "required when ALERTS_SMTP_URL is set" });
  }
}

/** The alerts service's settings, read from the environment once in main.ts. */
export const alertsConfigSchema = z
  .object({
    /** Postgres URL; unset runs on embedded PGlite under ROUTER_DATA_DIR. */
    DATABASE_URL: z.string().optional(),
    /**
     * false (production): the service only checks that its schema is at the latest migration and
     * refuses to start if not; `router migrate` applies them, as the owner, and its role has no DDL rights.
     */
    ROUTER_MIGRATE_ON_START: env.bool(true),
    /** Embedded state: PGlite files, generated secrets, the bus outbox. */
    ROUTER_DATA_DIR: z.string().default(".data"),
    ...busEnvironment,
    ...outboundEnvironment,
    ...alertsEnvironment,
    ALERTS_HTTP_PORT: env.port(8084),
    /** Internal port: loopback unless the deployment puts it on a private network. */
    ALERTS_HOST: z.string().default("127.0.0.1"),
    /** How often deliveries past 90 days (and spent announcement state) are deleted. */
    ALERTS_PRUNE_INTERVAL_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(3_600_000),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  })
  .superRefine(checkBusEnvironment)
  .superRefine(checkAlertsEnvironment);

export type AlertsConfig = z.infer<typeof alertsConfigSchema>;
