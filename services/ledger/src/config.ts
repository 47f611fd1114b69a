import { busEnvironment, checkBusEnvironment } from "@router/bus";
import { env, z } from "@router/config";
import { fromUsd, type Nanodollars } from "@router/money";
import { NO_FEE, type FeeSchedule } from "./credits/credit-policy";
import type { StripeSettings } from "./credits/payment-processor";

/** The payment processor's settings, as the standalone ledger and the one-process default take them. */
export const stripeEnvironment = {
  /**
   * The payment processor's (Stripe's) API secret key: purchases' invoices and receipts are read
   * with it, and the fee schedule reports `configured` when it is set.
   */
  LEDGER_STRIPE_SECRET_KEY: z.string().min(1).optional(),
  /** The signing secret of the processor's webhook endpoint (`whsec_...`): unset, no event is accepted. */
  LEDGER_STRIPE_WEBHOOK_SECRET: z.string().min(1).optional(),
  /** Another address for the processor's API (a mock in tests); default Stripe's own. */
  LEDGER_STRIPE_API_URL: z.url({ protocol: /^https?$/ }).optional(),
};

/** A USD amount such as `0.80`: at most 9 decimals (a nanodollar), read exactly as nanodollars. */
const usdSetting = (least: Nanodollars) =>
  z
    .string()
    .regex(/^\d{1,9}(\.\d{1,9})?$/, "expected a USD amount such as 0.80")
    .transform((text) => fromUsd(text))
    .refine((n) => n >= least, `must be at least ${Number(least) / 1e9} USD`);

/**
 * The operator's fee schedule, as the standalone ledger and the one-process default take it. No
 * fee by default: every request is free of Router's charge and credits are not purchasable.
 */
export const feeEnvironment = {
  /**
   * Router's fee in basis points (1/100 of a percent): of each request's list cost, charged from
   * credits, and of each purchase's amount. 0 charges nothing.
   */
  LEDGER_FEE_BPS: z.coerce.number().int().min(0).max(10_000).default(NO_FEE.feeBps),
  /** The least fee of a purchase, USD. */
  LEDGER_FEE_MIN: usdSetting(0n).default(NO_FEE.feeMin),
  /** The smallest purchase checkout accepts, USD. */
  LEDGER_MIN_PURCHASE: usdSetting(1n).default(NO_FEE.minPurchase),
  /** Where the processor's hosted checkout sends the customer after paying (the dashboard's credits page); unset, the processor's own page. */
  LEDGER_CHECKOUT_RETURN_URL: z.url({ protocol: /^https?$/ }).optional(),
};

/** The fee schedule as `startLedger` takes it. */
export function feeScheduleOf(config: z.infer<z.ZodObject<typeof feeEnvironment>>): FeeSchedule & { checkoutReturnUrl?: string } {
  return {
    feeBps: config.LEDGER_FEE_BPS,
    feeMin: config.LEDGER_FEE_MIN,
    minPurchase: config.LEDGER_MIN_PURCHASE,
    checkoutReturnUrl: config.LEDGER_CHECKOUT_RETURN_URL,
  };
}

/** The payment processor's settings as `startLedger` takes them. */
export function stripeSettingsOf(config: z.infer<z.ZodObject<typeof stripeEnvironment>>): StripeSettings {
  return {
    secretKey: config.LEDGER_STRIPE_SECRET_KEY,
    webhookSecret: config.LEDGER_STRIPE_WEBHOOK_SECRET,
    apiUrl: config.LEDGER_STRIPE_API_URL,
  };
}

/** The ledger's settings, read once from the environment by main.ts. */
export const ledgerConfigSchema = z.object({
  /** Postgres URL; unset runs on the embedded PGlite under ROUTER_DATA_DIR. */
  DATABASE_URL: z.string().min(1).optional(),
  /**
   * false (production): the service only checks that its schema is at the latest migration and
   * refuses to start if not; `router migrate` applies them, as the owner, and its role has no DDL rights.
   */
  ROUTER_MIGRATE_ON_START: env.bool(true),
  /** Where embedded state lives when DATABASE_URL is unset (PGlite files, generated secrets, the bus outbox). */
  ROUTER_DATA_DIR: z.string().default(".data"),
  /** The bus threshold crossings are published on. */
  ...busEnvironment,
  LEDGER_GRPC_PORT: env.port(50052),
  /** Port of the management routes the gateway forwards (workspace budgets, agents, runs). */
  LEDGER_HTTP_PORT: env.port(8085),
  /**
   * Verifies the identity the gateway signs and forwards on management routes. Required with
   * DATABASE_URL; embedded, the one generated under ROUTER_DATA_DIR is shared.
   */
  ROUTER_IDENTITY_PUBLIC_KEYS: z.string().optional(),
  /** Interface the gRPC server binds; loopback unless other hosts must reach it. */
  LEDGER_HOST: z.string().default("127.0.0.1"),
  /** Port of the listener serving only GET /metrics. */
  LEDGER_METRICS_PORT: env.port(9465),
  /** Interface the metrics listener binds; loopback unless a scraper on another host must reach it. */
  METRICS_HOST: z.string().default("127.0.0.1"),
  /**
   * How long a hold reserves its worst case unless its gateway renews it (gateways renew the holds of
   * their running requests every GATEWAY_HOLD_RENEW_MS): a hold not renewed for this long is lost
   * with its gateway, charged at what it covered and its request recorded as `router.gateway_lost`.
   */
  LEDGER_HOLD_TTL_MS: z.coerce.number().int().positive().default(60_000),
  /** How often expired holds are ended: a lost hold ends within LEDGER_HOLD_TTL_MS plus this. */
  LEDGER_SWEEP_INTERVAL_MS: z.coerce.number().int().positive().default(10_000),
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
  /**
   * How long Admit waits, at most, before refusing on a counter row that is at its limit only
   * because spend leases hold unspent headroom of it (gateways trim a lease after about a second
   * of use); 0 never waits.
   */
  LEDGER_LEASE_WAIT_MS: z.coerce.number().int().min(0).default(1_500),
  /**
   * How often each organisation's budgets are read again while admissions use them: a budget
   * written through another replica binds here within this long (at once on the replica written).
   */
  LEDGER_BUDGET_REFRESH_MS: z.coerce.number().int().positive().default(5_000),
  ...stripeEnvironment,
  ...feeEnvironment,
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
}).superRefine(checkBusEnvironment);

export type LedgerConfig = z.infer<typeof ledgerConfigSchema>;
