import { join } from "node:path";
import { env, z } from "@router/config";
import type { Logger } from "@router/logging";
import type { TopicLayout } from "./kafka/topic-plan";
import { REDIS_ENTRY_LAYOUTS, type BusConfig, type RedisEntryLayout } from "./port";

/** The bus settings every service reads from its environment; spread into a service's config schema. */
export const busEnvironment = {
  /** `kafka`, `redis` (Streams) or `memory` (one process). */
  ROUTER_BUS: z.enum(["memory", "redis", "kafka"]).default("memory"),
  /** Prefix of every topic on the broker, to share one broker between installs. */
  ROUTER_BUS_NAMESPACE: z.string().regex(/^[a-zA-Z0-9_-]+$/, "letters, digits, '-' and '_' only").optional(),
  REDIS_URL: z.string().optional(),
  /** Comma-separated host:port list. */
  KAFKA_BROKERS: env.list().optional(),
  /** How long batching consumers let events gather between reads (redis); 0 reads at once. */
  ROUTER_BUS_BATCH_WAIT_MS: z.coerce.number().int().min(0).max(10_000).optional(),
  /**
   * How the Redis bus writes its stream entries: `fields` (default) or `packed` (cheaper; only once
   * every service of the install reads it, see BusConfig.redisEntryLayout).
   */
  ROUTER_BUS_REDIS_ENTRY_LAYOUT: z.enum(REDIS_ENTRY_LAYOUTS).optional(),
};

type BusEnvironment = {
  ROUTER_BUS: BusConfig["kind"];
  ROUTER_BUS_NAMESPACE?: string;
  REDIS_URL?: string;
  KAFKA_BROKERS?: string[];
  ROUTER_BUS_BATCH_WAIT_MS?: number;
  ROUTER_BUS_REDIS_ENTRY_LAYOUT?: RedisEntryLayout;
};

/** A superRefine step: the broker address the chosen bus needs must be set. */
export function checkBusEnvironment(c: BusEnvironment, ctx: z.RefinementCtx): void {
  if (c.ROUTER_BUS === "redis" && !c.REDIS_URL) {
    ctx.addIssue({ code: "custom", path: ["REDIS_URL"], message: "required when ROUTER_BUS=redis" });
  }
  if (c.ROUTER_BUS === "kafka" && (c.KAFKA_BROKERS ?? []).length === 0) {
    ctx.addIssue({ code: "custom", path: ["KAFKA_BROKERS"], message: "required when ROUTER_BUS=kafka" });
  }
}

/** The BusConfig for a service, with its outbox under `<dataDir>/outbox/<clientId>` unless given. */
export function busConfigOf(
  c: BusEnvironment,
  opts: { clientId: string; dataDir: string; log: Logger; outboxDir?: string },
): BusConfig {
  return {
    kind: c.ROUTER_BUS,
    clientId: opts.clientId,
    namespace: c.ROUTER_BUS_NAMESPACE,
    redisUrl: c.REDIS_URL,
    kafkaBrokers: c.KAFKA_BROKERS,
    batchWaitMs: c.ROUTER_BUS_BATCH_WAIT_MS,
    redisEntryLayout: c.ROUTER_BUS_REDIS_ENTRY_LAYOUT,
    outboxDir: opts.outboxDir ?? join(opts.dataDir, "outbox", opts.clientId),
    log: opts.log,
  };
}

/**
 * How `router kafka topics create` lays out the topics it declares. Defaults suit a 3-broker
 * cluster: 12 partitions (room for 12 replicas of a consumer), 3 copies, writes waiting for 2.
 */
export const kafkaTopicEnvironment = {
  KAFKA_TOPIC_PARTITIONS: z.coerce.number().int().min(1).max(1000).default(12),
  KAFKA_TOPIC_REPLICATION_FACTOR: z.coerce.number().int().min(1).max(16).default(3),
  /** Default: 2, or the replication factor when that is smaller. */
  KAFKA_TOPIC_MIN_INSYNC_REPLICAS: z.coerce.number().int().min(1).max(16).optional(),
};

export function topicLayoutOf(c: {
  KAFKA_TOPIC_PARTITIONS: number;
  KAFKA_TOPIC_REPLICATION_FACTOR: number;
  KAFKA_TOPIC_MIN_INSYNC_REPLICAS?: number;
}): TopicLayout {
  return {
    partitions: c.KAFKA_TOPIC_PARTITIONS,
    replicationFactor: c.KAFKA_TOPIC_REPLICATION_FACTOR,
    minInsyncReplicas: c.KAFKA_TOPIC_MIN_INSYNC_REPLICAS ?? Math.min(2, c.KAFKA_TOPIC_REPLICATION_FACTOR),
  };
}
