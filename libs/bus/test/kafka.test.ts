import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Kafka } from "kafkajs";
import { createLogger } from "@router/logging";
import { uniqueName, waitFor } from "@router/testkit";
import { BusMisconfiguredError, createBus, declareKafkaTopics, type BusConfig } from "../src";
import { runBusContract } from "./contract";

const log = createLogger({ level: process.env.LOG_LEVEL ?? "silent" });
const brokers = process.env.KAFKA_BROKERS?.split(",").map((b) => b.trim()).filter(Boolean) ?? [];
const outboxDirs: string[] = [];
// A one-broker test cluster: one copy of each partition.
const layout = { partitions: 4, replicationFactor: 1, minInsyncReplicas: 1 };

// No Kafka broker runs on the development machines by default: the Kafka suite runs wherever
// KAFKA_BROKERS is set (docker compose, CI with Kafka, `make test-kafka`). Skipped otherwise, as
// it needs a real broker to mean anything; the error classification and topic planning it relies
// on are unit-tested without one (kafka-errors.test.ts, topic-plan.test.ts).
const describeWithKafka = brokers.length > 0 ? describe : describe.skip;

describeWithKafka("kafka", () => {
  // A consumer that stops for good would otherwise exit the test process (the default onFatal):
  // the test that caused it fails instead, naming the error.
  let fatal: Error[] = [];
  afterEach(() => {
    const seen = fatal;
    fatal = [];
    expect(seen.map((err) => err.message)).toEqual([]);
  });
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
        onFatal: (err) => void fatal.push(err),
        ...overrides,
      });
    },
    {
      // Kafka counts no deliveries: an event taken over after a crash starts again at attempt 1.
      countsCrashRedeliveries: false,
      // Buses never create topics: the test declares each one as a deployment would.
      declare: async (topic) => void (await declareKafkaTopics({ brokers, topics: [topic], layout, log })),
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

  describe("a service's group per topic, on an upgrade from the group named after the service", () => {
    it("starts where the former group stood: nothing it committed is replayed, nothing published since is skipped", async () => {
      const topic = uniqueName("bus.migrated");
      await declareKafkaTopics({ brokers, topics: [topic], layout, log });
      const outboxDir = await mkdtemp(path.join(os.tmpdir(), "bus-kafka-"));
      outboxDirs.push(outboxDir);
      const bus = await createBus({ kind: "kafka", clientId: "kafka-migration", kafkaBrokers: brokers, log, outboxDir, reclaimIdleMs: 6_000, onFatal: (err) => void fatal.push(err) });
      const admin = new Kafka({ clientId: "kafka-migration-admin", brokers }).admin();
      await admin.connect();
      try {
        const publish = (text: string, key: string) => bus.publish({ topic, key, type: "router.test.happened.v1", payload: new TextEncoder().encode(text) });
        // The old group "alerts" consumed these and committed; only some partitions have a position.
        for (let i = 0; i < 5; i++) await publish(`old-${i}`, "org-a");
        const ends = await admin.fetchTopicOffsets(topic);
        const consumed = ends.filter((p) => Number(p.high) > 0).map((p) => ({ partition: p.partition, offset: p.high }));
        expect(consumed).toHaveLength(1);
        await admin.setOffsets({ groupId: "alerts", topic, partitions: consumed });
        // Published during the rollout, before the new group exists: on committed and on new partitions.
        const rollout = ["org-a", "org-b", "org-c", "org-d", "org-e", "org-f"].map((key, i) => ({ text: `new-${i}`, key }));
        for (const { text, key } of rollout) await publish(text, key);

        const got: string[] = [];
        await bus.subscribe({ topic, group: "alerts", handler: async (e) => void got.push(Buffer.from(e.payload).toString("utf8")) });
        await waitFor(() => got.length >= rollout.length, { timeoutMs: 20_000, what: "the rollout's events" });
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect([...got].sort()).toEqual(rollout.map((r) => r.text).sort());

        const adopted = await admin.fetchOffsets({ groupId: `alerts.${topic}`, topics: [topic] });
        const positions = adopted.flatMap((t) => t.partitions).filter((p) => Number(p.offset) >= 0);
        expect(positions.length).toBeGreaterThan(0);
      } finally {
        await admin.disconnect();
        await bus.close();
      }
    });
  });

  describe("a consumer whose handler outlived its session", () => {
    it("rejoins when its commit is refused, instead of stopping the service, and goes on", async () => {
      const topic = uniqueName("bus.stalled");
      await declareKafkaTopics({ brokers, topics: [topic], layout, log });
      const outboxDir = await mkdtemp(path.join(os.tmpdir(), "bus-kafka-"));
      outboxDirs.push(outboxDir);
      const bus = await createBus({ kind: "kafka", clientId: "kafka-stalled", kafkaBrokers: brokers, log, outboxDir, reclaimIdleMs: 6_000, onFatal: (err) => void fatal.push(err) });
      try {
        const handled: string[] = [];
        let stalled = false;
        await bus.subscribe({
          topic,
          group: "stalling",
          handler: async (e) => {
            // Longer than the session (6 s): the broker removes the member meanwhile, so the
            // commit after it is refused (UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION).
            if (!stalled) {
              stalled = true;
              await new Promise((resolve) => setTimeout(resolve, 8_000));
            }
            handled.push(e.id);
          },
        });
        const publish = (id: string) => bus.publish({ topic, key: "k", id, type: "router.test.happened.v1", payload: new TextEncoder().encode(id) });
        await publish("evt-slow");
        await waitFor(() => stalled, { what: "the stalled delivery" });
        await publish("evt-after");
        await waitFor(() => handled.includes("evt-after"), { timeoutMs: 30_000, what: "the event after the stall" });
        expect(handled).toContain("evt-slow");
      } finally {
        await bus.close();
      }
    }, 45_000);
  });

  describe("a deployment that forgot to declare a topic", () => {
    it("refuses the subscription, naming the topic and the command that declares it, and creates nothing", async () => {
      const topic = uniqueName("bus.undeclared");
      const bus = await createBus({ kind: "kafka", clientId: "kafka-undeclared", kafkaBrokers: brokers, log, outboxDir: await mkdtemp(path.join(os.tmpdir(), "bus-kafka-")) });
      try {
        const refused = bus.subscribe({ topic, group: "g", handler: async () => undefined });
        await expect(refused).rejects.toBeInstanceOf(BusMisconfiguredError);
        await expect(refused).rejects.toThrow(new RegExp(`topic ${topic.replace(/\./g, "\\.")}.*router kafka topics create`));
      } finally {
        await bus.close();
      }
      const admin = new Kafka({ clientId: "kafka-contract-check", brokers }).admin();
      await admin.connect();
      try {
        expect(await admin.listTopics()).not.toContain(topic);
      } finally {
        await admin.disconnect();
      }
    });

    it("keeps an event published to it in the outbox and stops the service through onFatal", async () => {
      const topic = uniqueName("bus.undeclared");
      const fatal: Error[] = [];
      const outboxDir = await mkdtemp(path.join(os.tmpdir(), "bus-kafka-"));
      outboxDirs.push(outboxDir);
      const bus = await createBus({ kind: "kafka", clientId: "kafka-undeclared", kafkaBrokers: brokers, log, outboxDir, publishTimeoutMs: 5_000, onFatal: (err) => void fatal.push(err) });
      try {
        await bus.publish({ topic, key: "k", type: "router.test.happened.v1", payload: new TextEncoder().encode("kept") });
        await waitFor(() => fatal.length > 0, { timeoutMs: 20_000, what: "onFatal" });
        expect(fatal).toHaveLength(1);
        expect(fatal[0]).toBeInstanceOf(BusMisconfiguredError);
        expect(fatal[0]?.message).toMatch(/topic_not_declared/);
      } finally {
        await bus.close();
      }
    });
  });
});
