import { Kafka, logLevel } from "kafkajs";
import type { Logger } from "@router/logging";
import { misconfiguration } from "./kafka-errors";
import { pinoLogCreator } from "./kafka-log";
import { planTopics, topicNames, type TopicLayout, type TopicPlan } from "./topic-plan";

export interface DeclareTopicsOptions {
  brokers: string[];
  /** Plain topic names (`TOPICS`); each gets its `.dlq` topic too. */
  topics: readonly string[];
  /** The install's ROUTER_BUS_NAMESPACE, prefixed as the services prefix it. */
  namespace?: string;
  layout: TopicLayout;
  log: Logger;
}

/**
 * The deployment step that creates Router's topics (services never create any): creates what is
 * missing with the configured partitions, replication and min.insync.replicas, leaves what exists
 * alone, and returns what it found and did. Safe to run on every release.
 */
export async function declareKafkaTopics(opts: DeclareTopicsOptions): Promise<TopicPlan> {
  const kafka = new Kafka({
    clientId: "router-topics",
    brokers: opts.brokers,
    retry: { retries: 3, initialRetryTime: 200, maxRetryTime: 2_000 },
    logLevel: logLevel.WARN,
    logCreator: pinoLogCreator(opts.log),
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const metadata = await admin.fetchTopicMetadata();
    const existing = new Map(metadata.topics.map((t) => [t.name, t.partitions.length]));
    const plan = planTopics(topicNames(opts.topics, opts.namespace), opts.layout, existing);
    if (plan.create.length > 0) await admin.createTopics({ topics: plan.create, waitForLeaders: true });
    return plan;
  } catch (err) {
    throw misconfiguration(err, {}) ?? err;
  } finally {
    await admin.disconnect();
  }
}
