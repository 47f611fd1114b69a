import { readFileSync } from "node:fs";
import { env, z } from "@router/config";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import type { OutboundOptions } from "./outbound";

/** The outbound delivery settings a delivering service reads; spread into its config schema. */
export const outboundEnvironment = {
  /** Per attempt: connect, TLS and the receiver's answer. */
  ROUTER_OUTBOUND_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
  /** Attempts after the first (network errors, timeouts, 5xx, 429). */
  ROUTER_OUTBOUND_RETRIES: z.coerce.number().int().min(0).max(10).default(3),
  /** First backoff delay; doubles per retry, with jitter, capped at 10 s. */
  ROUTER_OUTBOUND_RETRY_DELAY_MS: z.coerce.number().int().min(1).max(60_000).default(500),
  ROUTER_OUTBOUND_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
  /** Deliveries waiting for a slot; past it a delivery is recorded `skipped`. */
  ROUTER_OUTBOUND_QUEUE_LIMIT: z.coerce.number().int().min(1).max(100_000).default(1_000),
  /** TEST ONLY, never in production: hosts or addresses let through on any port, loopback included. */
  ROUTER_OUTBOUND_ALLOW_HOSTS: env.list().optional(),
  /** TEST ONLY, never in production: a PEM file with one more CA to trust (receivers with a test certificate). */
  ROUTER_OUTBOUND_CA_FILE: z.string().optional(),
};

type OutboundEnvironment = {
  ROUTER_OUTBOUND_TIMEOUT_MS: number;
  ROUTER_OUTBOUND_RETRIES: number;
  ROUTER_OUTBOUND_RETRY_DELAY_MS: number;
  ROUTER_OUTBOUND_CONCURRENCY: number;
  ROUTER_OUTBOUND_QUEUE_LIMIT: number;
  ROUTER_OUTBOUND_ALLOW_HOSTS?: string[];
  ROUTER_OUTBOUND_CA_FILE?: string;
};

/** The Outbound options for a service's parsed settings (reads the test CA file when one is named). */
export function outboundOptionsOf(c: OutboundEnvironment, deps: { log: Logger; clock?: Clock }): OutboundOptions {
  return {
    log: deps.log,
    clock: deps.clock,
    timeoutMs: c.ROUTER_OUTBOUND_TIMEOUT_MS,
    retries: c.ROUTER_OUTBOUND_RETRIES,
    retryDelayMs: c.ROUTER_OUTBOUND_RETRY_DELAY_MS,
    concurrency: c.ROUTER_OUTBOUND_CONCURRENCY,
    queueLimit: c.ROUTER_OUTBOUND_QUEUE_LIMIT,
    allowHosts: c.ROUTER_OUTBOUND_ALLOW_HOSTS,
    ca: c.ROUTER_OUTBOUND_CA_FILE === undefined ? undefined : readFileSync(c.ROUTER_OUTBOUND_CA_FILE, "utf8"),
  };
}
