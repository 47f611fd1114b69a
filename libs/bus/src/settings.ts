import path from "node:path";
import { createTimeout } from "retry";
import { invalid } from "@router/errors";
import { REDIS_ENTRY_LAYOUTS, type BusConfig, type RedisEntryLayout } from "./port";

/** BusConfig with every tuning default filled in. */
export interface BusSettings {
  clientId: string;
  partitions: number;
  reclaimIdleMs: number;
  retryDelayMs: number;
  publishTimeoutMs: number;
  outboxRetryMs: number;
  pollMs: number;
  closeTimeoutMs: number;
  batchWaitMs: number;
  redisEntryLayout: RedisEntryLayout;
  outboxDir: string;
}

const MAX_RETRY_DELAY_MS = 30_000;

/**
 * How long a batching consumer lets events gather by default. At 300 requests a second, 50 ms
 * batches cost each consumer (and Postgres) 20 reads, acknowledgements and statements a second;
 * 250 ms, 4 (docs/performance.md).
 */
export const DEFAULT_BATCH_WAIT_MS = 250;

export function settingsOf(config: BusConfig): BusSettings {
  const positive = (field: keyof BusConfig, value: number | undefined, fallback: number): number => {
    if (value === undefined) return fallback;
    if (!Number.isFinite(value) || value <= 0) throw invalid(`bus.${field}`, "must be a positive number");
    return value;
  };
  const partitions = positive("partitions", config.partitions, 8);
  if (!Number.isInteger(partitions)) throw invalid("bus.partitions", "must be a whole number");
  return {
    clientId: config.clientId,
    partitions,
    reclaimIdleMs: positive("reclaimIdleMs", config.reclaimIdleMs, 30_000),
    retryDelayMs: positive("retryDelayMs", config.retryDelayMs, 1_000),
    publishTimeoutMs: positive("publishTimeoutMs", config.publishTimeoutMs, 3_000),
    outboxRetryMs: positive("outboxRetryMs", config.outboxRetryMs, 1_000),
    pollMs: positive("pollMs", config.pollMs, 1_000),
    closeTimeoutMs: positive("closeTimeoutMs", config.closeTimeoutMs, 10_000),
    batchWaitMs: batchWaitOf("bus.batchWaitMs", config.batchWaitMs, DEFAULT_BATCH_WAIT_MS),
    redisEntryLayout: entryLayoutOf(config.redisEntryLayout),
    outboxDir: config.outboxDir ?? path.resolve(".data", "outbox", config.clientId),
  };
}

function entryLayoutOf(value: string | undefined): RedisEntryLayout {
  if (value === undefined) return "fields";
  const known = REDIS_ENTRY_LAYOUTS.find((layout) => layout === value);
  if (!known) throw invalid("bus.redisEntryLayout", `must be one of ${REDIS_ENTRY_LAYOUTS.join(", ")}`);
  return known;
}

/** `value` as a batch wait (`bus.batchWaitMs`, or a subscription's own), else `fallback`. */
function batchWaitOf(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw invalid(field, "must be zero or a positive number");
  return value;
}

/** A subscription's batch wait, asked before each gather: its own (fixed or decided each time), else the bus's. */
export function subscriptionBatchWait(value: number | (() => number | undefined) | undefined, busWaitMs: number): () => number {
  if (typeof value !== "function") {
    const fixed = batchWaitOf("batchWaitMs", value, busWaitMs);
    return () => fixed;
  }
  return () => {
    const decided = value();
    return decided === undefined || !Number.isFinite(decided) ? busWaitMs : Math.max(0, decided);
  };
}

/**
 * Backoff before the next delivery after `attempt` failed: doubling from `retryDelayMs`, capped,
 * each delay stretched by a random 0-100% so consumers that failed together do not retry together.
 */
export function retryDelay(settings: BusSettings, attempt: number): number {
  return createTimeout(Math.max(0, attempt - 1), {
    factor: 2,
    minTimeout: settings.retryDelayMs,
    maxTimeout: MAX_RETRY_DELAY_MS,
    randomize: true,
  });
}

export const DEFAULT_MAX_ATTEMPTS = 5;

export function maxAttemptsOf(value: number | undefined): number {
  if (value === undefined) return DEFAULT_MAX_ATTEMPTS;
  if (!Number.isInteger(value) || value < 1) throw invalid("maxAttempts", "must be a whole number of at least 1");
  return value;
}
