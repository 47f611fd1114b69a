import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Kafka } from "kafkajs";
import { createLogger } from "@router/logging";
import { createBus, type BusConfig } from "../src";
import { runBusContract } from "./contract";

const log = createLogger({ level: process.env.LOG_LEVEL ?? "silent" });
const brokers = process.env.KAFKA_BROKERS?.split(",").map((b) => b.trim()).filter(Boolean) ?? [];
const outboxDirs: string[] = [];

// No Kafka broker runs on the development machines by default: the Kafka suite runs wherever
// KAFKA_BROKERS is set (docker compose, CI with Kafka).
const describeWithKafka = brokers.length > 0 ? describe : describe.skip;

describeWithKafka("kafka", () => {
  afterAll(async () => {
    for (const dir of outboxDirs) await rm(dir, { recursive: true, force: true });
  });

  runBusContract(
    "kafka",
    async (overrides?: Partial<BusConfig>) => {
      const outboxDir = overrides?.outboxDir ?? (await mkdtemp(path.join(os.tmpdir(), "bus-kafka-")));
      outboxDirs.push(outboxDir);
      return createBus({
        kind: "kafka",
        clientId: "kafka-contract",
        kafkaBrokers: brokers,
        log,
        outboxDir,
        partitions: 4,
        // The broker's minimum session timeout: a stalled consumer is noticed after this.
        reclaimIdleMs: 6_000,
        retryDelayMs: 10,
        publishTimeoutMs: 5_000,
        outboxRetryMs: 200,
        closeTimeoutMs: 5_000,
        ...overrides,
      });
    },
    {
      // Kafka counts no deliveries: an event taken over after a crash starts again at attempt 1.
      countsCrashRedeliveries: false,
      // No outage case: clients reach brokers at their advertised addresses, so a TCP proxy in
      // front of one cannot cut them off. The outbox itself is the same code the redis suite proves.
      async cleanup(topics) {
        const admin = new Kafka({ clientId: "kafka-contract-cleanup", brokers }).admin();
        await admin.connect();
        try {
          const existing = new Set(await admin.listTopics());
          await admin.deleteTopics({ topics: topics.filter((t) => existing.has(t)) });
        } finally {
          await admin.disconnect();
        }
      },
    },
  );
});
