import { traced } from "./traced";
import { invalid } from "@router/errors";
import { createMemoryBus } from "./memory/memory-bus";
import { namespaced } from "./namespace";
import { perTopicGroups } from "./consumer-groups";
import type { BusConfig, EventBus } from "./port";
import type { DeclareTopicsOptions } from "./kafka/declare-topics";
import type { TopicPlan } from "./kafka/topic-plan";

export * from "./port";
export { consumerGroupOf } from "./consumer-groups";
export { DEFAULT_BATCH_WAIT_MS } from "./settings";
export { busEnvironment, checkBusEnvironment, busConfigOf, kafkaTopicEnvironment, topicLayoutOf } from "./environment";
export {
  idempotent,
  createMemoryIdempotencyStore,
  createRedisIdempotencyStore,
  type IdempotencyStore,
  type MemoryIdempotencyOptions,
  type RedisIdempotencyOptions,
} from "./idempotency";
export { BusMisconfiguredError, classifyKafkaError, type KafkaFailure, type MisconfigurationReason } from "./kafka/kafka-errors";
export { checkTopicLayout, planTopics, topicNames, type TopicLayout, type TopicPlan, type TopicSpec } from "./kafka/topic-plan";
export type { DeclareTopicsOptions } from "./kafka/declare-topics";
export {
  HEADER_EVENT_ID,
  HEADER_EVENT_TYPE,
  HEADER_CONTENT_TYPE,
  PROTOBUF_CONTENT_TYPE,
  HEADER_DLQ_ORIGINAL_TOPIC,
  HEADER_DLQ_ATTEMPTS,
  HEADER_DLQ_REASON,
  dlqTopicOf,
} from "./envelope";

/**
 * Builds the event bus chosen by `config.kind`. Broker clients are loaded only for the kind in use.
 * redis and kafka keep what the broker could not take in a durable outbox under `config.outboxDir`
 * and send it, in order, once the broker is back (first thing on start).
 */
export async function createBus(config: BusConfig): Promise<EventBus> {
  const bus = await createAdapter(config);
  return traced(perTopicGroups(config.namespace ? namespaced(bus, config.namespace, { groups: config.kind === "kafka" }) : bus));
}

async function createAdapter(config: BusConfig): Promise<EventBus> {
  switch (config.kind) {
    case "memory":
      return createMemoryBus(config);
    case "redis": {
      if (!config.redisUrl) throw invalid("redisUrl", "is required for the redis bus");
      const { createRedisBus } = await import("./redis/redis-bus");
      return createRedisBus({ ...config, redisUrl: config.redisUrl });
    }
    case "kafka": {
      if (!config.kafkaBrokers || config.kafkaBrokers.length === 0) {
        throw invalid("kafkaBrokers", "is required for the kafka bus");
      }
      const { createKafkaBus } = await import("./kafka/kafka-bus");
      return createKafkaBus({ ...config, kafkaBrokers: config.kafkaBrokers });
    }
    default:
      throw invalid("kind", `unknown bus kind ${String(config.kind)}`);
  }
}

/**
 * Creates Router's Kafka topics that are missing (the deployment step; services never create
 * topics). kafkajs is loaded only when this is called.
 */
export async function declareKafkaTopics(opts: DeclareTopicsOptions): Promise<TopicPlan> {
  const { declareKafkaTopics: declare } = await import("./kafka/declare-topics");
  return declare(opts);
}
