import Redis from "ioredis";
import { Kafka, logLevel } from "kafkajs";
import type { StackBus } from "@router/testkit";

/** The consumer groups of `router.request.completed.v1` (each service's CONSUMER_GROUP). */
export const REQUEST_COMPLETED_GROUPS = ["activity", "reports", "broadcast", "runaway", "routing"];

/**
 * How long after a load ended every consumer group of `topic` on the stack's bus had taken every
 * event (Redis Streams or Kafka). Null when they did not catch up within `timeoutMs`.
 */
export function catchUpMs(bus: StackBus, topic: string, groups: string[], timeoutMs = 30_000): Promise<number | null> {
  const namespaced = `${bus.namespace}.${topic}`;
  if (bus.kind === "kafka") return kafkaCatchUpMs(bus.kafkaBrokers ?? [], namespaced, groups.map((g) => `${bus.namespace}.${g}`), timeoutMs);
  return redisCatchUpMs(bus.redisUrl, namespaced, timeoutMs);
}

/**
 * How long after a load ended every consumer group of a topic on the Redis Streams bus had taken
 * (acknowledged) every event: polls XINFO GROUPS on each partition stream until no group has
 * entries left to read (`lag`) or unacknowledged (`pending`). Null when it did not catch up within
 * `timeoutMs`.
 */
async function redisCatchUpMs(redisUrl: string, namespacedTopic: string, timeoutMs: number): Promise<number | null> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    const partitions = Number((await redis.get(`${namespacedTopic}:partitions`)) ?? "0");
    const started = performance.now();
    while (performance.now() - started < timeoutMs) {
      let behind = 0;
      for (let p = 0; p < partitions; p++) {
        const groups = (await redis.call("XINFO", "GROUPS", `${namespacedTopic}:p${p}`).catch(() => [])) as unknown[][];
        for (const g of groups) {
          const fields = new Map<string, unknown>();
          for (let i = 0; i + 1 < g.length; i += 2) fields.set(String(g[i]), g[i + 1]);
          behind += Number(fields.get("lag") ?? 0) + Number(fields.get("pending") ?? 0);
        }
      }
      if (behind === 0) return Math.round(performance.now() - started);
      await new Promise((r) => setTimeout(r, 25));
    }
    return null;
  } finally {
    redis.disconnect();
  }
}

/**
 * The same on Kafka: polls each group's committed offsets against the topic's end offsets until
 * no group has anything left (groups are namespaced on Kafka: `<namespace>.<service>`).
 */
async function kafkaCatchUpMs(brokers: string[], topic: string, groups: string[], timeoutMs: number): Promise<number | null> {
  const admin = new Kafka({ clientId: "router-bench", brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const started = performance.now();
    while (performance.now() - started < timeoutMs) {
      const ends = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, BigInt(p.high)]));
      let behind = 0n;
      for (const groupId of groups) {
        const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
        for (const p of committed?.partitions ?? []) {
          const end = ends.get(p.partition) ?? 0n;
          const at = BigInt(p.offset) < 0n ? 0n : BigInt(p.offset);
          if (end > at) behind += end - at;
        }
      }
      if (behind === 0n) return Math.round(performance.now() - started);
      await new Promise((r) => setTimeout(r, 25));
    }
    return null;
  } finally {
    await admin.disconnect();
  }
}
