import { BusMisconfiguredError, checkTopicLayout, declareKafkaTopics, topicLayoutOf, type TopicPlan } from "@router/bus";
import type { Logger } from "@router/logging";
import { TOPICS } from "@router/proto";
import type { CliConfig } from "../config";

/**
 * `kafka topics create`: the deployment step that declares every Router topic and its `.dlq` on
 * KAFKA_BROKERS (under ROUTER_BUS_NAMESPACE when set), with KAFKA_TOPIC_PARTITIONS,
 * KAFKA_TOPIC_REPLICATION_FACTOR and KAFKA_TOPIC_MIN_INSYNC_REPLICAS. Existing topics are left as
 * they are. One JSON line per topic.
 */
export async function runKafkaTopicsCreate(config: CliConfig, log: Logger): Promise<number> {
  const brokers = (config.KAFKA_BROKERS ?? "").split(",").map((b) => b.trim()).filter(Boolean);
  if (brokers.length === 0) {
    process.stderr.write("kafka topics create: set KAFKA_BROKERS (comma-separated host:port)\n");
    return 2;
  }
  const layout = topicLayoutOf(config);
  checkTopicLayout(layout);
  let plan: TopicPlan;
  try {
    plan = await declareKafkaTopics({ brokers, topics: Object.values(TOPICS), namespace: config.ROUTER_BUS_NAMESPACE, layout, log });
  } catch (err) {
    // A misconfiguration's message says what to fix; anything else is the brokers not answering.
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(
      err instanceof BusMisconfiguredError ? `${message}\n` : `kafka topics create: no answer from KAFKA_BROKERS=${brokers.join(",")} (${message})\n`,
    );
    return 1;
  }
  const line = (row: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(row)}\n`);
  for (const t of plan.create) {
    line({ topic: t.topic, action: "created", partitions: t.numPartitions, replication_factor: t.replicationFactor });
  }
  for (const t of plan.present) line({ topic: t.topic, action: "exists", partitions: t.partitions });
  for (const t of plan.fewerPartitions) {
    line({ topic: t.topic, action: "exists", partitions: t.partitions, wanted: t.wanted });
    process.stderr.write(
      `${t.topic} has ${t.partitions} partitions, fewer than KAFKA_TOPIC_PARTITIONS=${t.wanted}: left as it is ` +
        "(adding partitions moves keys; see docs/runbook.md, Kafka)\n",
    );
  }
  return 0;
}
