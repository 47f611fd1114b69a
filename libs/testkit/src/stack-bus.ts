import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import Redis from "ioredis";
import { Kafka, logLevel } from "kafkajs";
import { TEST_REDIS_URL } from "./database";

// libs/testkit/{src,dist} -> repository root
const root = join(__dirname, "..", "..", "..");

/**
 * The bus a test stack runs on, and how a test makes a client of it:
 * `createBus({ ...stack.bus, clientId, log })`. Redis Streams unless the environment says
 * `ROUTER_BUS=kafka` with `KAFKA_BROKERS` (`make test-kafka`), so every end-to-end test runs on
 * Kafka too wherever a broker is at hand.
 */
export interface StackBus {
  kind: "redis" | "kafka";
  redisUrl: string;
  kafkaBrokers?: string[];
  /** Every topic of the stack is `<namespace>.<topic>`: parallel stacks never share one. */
  namespace: string;
}

export function stackBusOf(namespace: string, env: NodeJS.ProcessEnv = process.env): StackBus {
  const kind = env.ROUTER_BUS ?? "redis";
  if (kind === "redis") return { kind, redisUrl: TEST_REDIS_URL, namespace };
  if (kind !== "kafka") throw new Error(`ROUTER_BUS=${kind}: the test stack runs on redis (the default) or kafka`);
  const kafkaBrokers = (env.KAFKA_BROKERS ?? "").split(",").map((b) => b.trim()).filter(Boolean);
  if (kafkaBrokers.length === 0) throw new Error("ROUTER_BUS=kafka: set KAFKA_BROKERS to the test broker (host:port)");
  return { kind, redisUrl: TEST_REDIS_URL, kafkaBrokers, namespace };
}

/** The services' environment for this bus. */
export function stackBusEnv(bus: StackBus): Record<string, string> {
  return {
    ROUTER_BUS: bus.kind,
    ROUTER_BUS_NAMESPACE: bus.namespace,
    REDIS_URL: bus.redisUrl,
    ...(bus.kafkaBrokers ? { KAFKA_BROKERS: bus.kafkaBrokers.join(",") } : {}),
  };
}

/**
 * Kafka: declares the stack's topics with the operator CLI, as a deployment does (services never
 * create topics); one copy on a test broker unless KAFKA_TOPIC_REPLICATION_FACTOR says otherwise.
 * Redis Streams need nothing.
 */
export async function prepareStackBus(bus: StackBus): Promise<void> {
  if (bus.kind !== "kafka") return;
  await promisify(execFile)(process.execPath, [join(root, "services", "cli", "dist", "main.js"), "kafka", "topics", "create"], {
    env: {
      PATH: process.env.PATH ?? "",
      ...stackBusEnv(bus),
      KAFKA_TOPIC_PARTITIONS: process.env.KAFKA_TOPIC_PARTITIONS ?? "4",
      KAFKA_TOPIC_REPLICATION_FACTOR: process.env.KAFKA_TOPIC_REPLICATION_FACTOR ?? "1",
      LOG_LEVEL: "warn",
    },
  });
}

/** Deletes what the stack left on the broker: its Redis keys, or its Kafka topics. */
export async function dropStackBus(bus: StackBus): Promise<void> {
  if (!bus.namespace) return;
  const prefix = `${bus.namespace}.`;
  if (bus.kind === "kafka") {
    const admin = new Kafka({ clientId: "router-testkit", brokers: bus.kafkaBrokers ?? [], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
      if (topics.length > 0) await admin.deleteTopics({ topics });
    } finally {
      await admin.disconnect();
    }
    return;
  }
  const redis = new Redis(bus.redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}
