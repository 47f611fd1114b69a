import { invalid } from "@router/errors";
import { dlqTopicOf } from "../envelope";

/** How the deployment wants its topics (from KAFKA_TOPIC_* settings). */
export interface TopicLayout {
  /** Partitions of each topic: bounds how many replicas of one consumer read in parallel. */
  partitions: number;
  /** Copies of each partition across brokers. */
  replicationFactor: number;
  /** In-sync copies a write waits for (the producer sends with acks=all). */
  minInsyncReplicas: number;
}

export interface TopicSpec {
  topic: string;
  numPartitions: number;
  replicationFactor: number;
  configEntries: Array<{ name: string; value: string }>;
}

/** What declaring the topics will do, and what it cannot fix. */
export interface TopicPlan {
  create: TopicSpec[];
  /** Already there with at least the wanted partitions. */
  present: Array<{ topic: string; partitions: number }>;
  /**
   * Already there with fewer partitions than wanted. Not changed: adding partitions moves keys to
   * other partitions, so a key's events could be handled out of order while the old ones drain.
   */
  fewerPartitions: Array<{ topic: string; partitions: number; wanted: number }>;
}

export function checkTopicLayout(layout: TopicLayout): void {
  const whole = (field: string, value: number, min: number, max: number) => {
    if (!Number.isInteger(value) || value < min || value > max) throw invalid(field, `a whole number from ${min} to ${max}`);
  };
  whole("KAFKA_TOPIC_PARTITIONS", layout.partitions, 1, 1000);
  whole("KAFKA_TOPIC_REPLICATION_FACTOR", layout.replicationFactor, 1, 16);
  whole("KAFKA_TOPIC_MIN_INSYNC_REPLICAS", layout.minInsyncReplicas, 1, 16);
  if (layout.minInsyncReplicas > layout.replicationFactor) {
    throw invalid("KAFKA_TOPIC_MIN_INSYNC_REPLICAS", "cannot exceed KAFKA_TOPIC_REPLICATION_FACTOR");
  }
}

/**
 * The broker names of the topics to declare: each topic under the install's namespace, and its
 * dead-letter topic (consumers move failed events there; it must exist before the first failure).
 */
export function topicNames(topics: readonly string[], namespace?: string): string[] {
  const prefix = namespace ? `${namespace}.` : "";
  return [...new Set(topics)].flatMap((t) => [prefix + t, dlqTopicOf(prefix + t)]);
}

/** Compares the wanted topics with what the broker has (`existing`: topic -> partition count). */
export function planTopics(names: readonly string[], layout: TopicLayout, existing: ReadonlyMap<string, number>): TopicPlan {
  checkTopicLayout(layout);
  const plan: TopicPlan = { create: [], present: [], fewerPartitions: [] };
  for (const topic of names) {
    const partitions = existing.get(topic);
    if (partitions === undefined) {
      plan.create.push({
        topic,
        numPartitions: layout.partitions,
        replicationFactor: layout.replicationFactor,
        configEntries: [{ name: "min.insync.replicas", value: String(layout.minInsyncReplicas) }],
      });
    } else if (partitions < layout.partitions) {
      plan.fewerPartitions.push({ topic, partitions, wanted: layout.partitions });
    } else {
      plan.present.push({ topic, partitions });
    }
  }
  return plan;
}
