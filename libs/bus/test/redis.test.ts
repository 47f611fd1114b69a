import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Redis from "ioredis";
import { createLogger } from "@router/logging";
import { TEST_REDIS_URL, waitFor } from "@router/testkit";
import { createBus, createRedisIdempotencyStore, type BusConfig } from "../src";
import { runBusContract, type MakeBus } from "./contract";
import { TcpProxy } from "./tcp-proxy";

const log = createLogger({ level: process.env.LOG_LEVEL ?? "silent" });
const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true });
const outboxDirs: string[] = [];

const busOn =
  (redisUrl: string): MakeBus =>
  async (overrides?: Partial<BusConfig>) => {
    const outboxDir = overrides?.outboxDir ?? (await mkdtemp(path.join(os.tmpdir(), "bus-redis-")));
    outboxDirs.push(outboxDir);
    return createBus({
      kind: "redis",
      clientId: "redis-contract",
      redisUrl,
      log,
      outboxDir,
      reclaimIdleMs: 500,
      retryDelayMs: 10,
      publishTimeoutMs: 1_000,
      outboxRetryMs: 100,
      pollMs: 100,
      closeTimeoutMs: 1_000,
      ...overrides,
    });
  };

afterAll(async () => {
  redis.disconnect();
  for (const dir of outboxDirs) await rm(dir, { recursive: true, force: true });
});

runBusContract("redis", busOn(TEST_REDIS_URL), {
  countsCrashRedeliveries: true,
  idempotencyStore: (scope) => createRedisIdempotencyStore(redis, { scope, ttlMs: 60_000 }),
  async cleanup(topics) {
    for (const topic of topics) {
      const keys = await redis.keys(`${topic}:*`);
      if (keys.length > 0) await redis.del(...keys);
    }
  },
  async outage() {
    const target = new URL(TEST_REDIS_URL);
    const proxy = await TcpProxy.start(target.hostname, Number(target.port || 6379));
    return {
      makeBus: busOn(`redis://127.0.0.1:${proxy.port}`),
      cut: () => proxy.cut(),
      restore: () => proxy.restore(),
      close: () => proxy.close(),
    };
  },
});

describe("redis bus batches", () => {
  it("hands a batch handler what one read brought, in stream order", async () => {
    const topic = `bus.batching.${Date.now()}`;
    const [producer, consumer] = await Promise.all([busOn(TEST_REDIS_URL)(), busOn(TEST_REDIS_URL)({ partitions: 1 })]);
    try {
      const texts = Array.from({ length: 20 }, (_, i) => `e${i}`);
      for (const text of texts) await producer.publish({ topic, key: "k", type: "router.test.v1", payload: Buffer.from(text) });
      const batches: string[][] = [];
      await consumer.subscribe({
        topic,
        group: "g",
        handler: async (e) => void batches.push([Buffer.from(e.payload).toString()]),
        batchHandler: async (events) => void batches.push(events.map((e) => Buffer.from(e.payload).toString())),
      });
      await waitFor(() => batches.flat().length === texts.length, { what: "every event" });
      expect(batches.flat()).toEqual(texts);
      expect(Math.max(...batches.map((b) => b.length))).toBeGreaterThan(1);
    } finally {
      await Promise.all([producer.close(), consumer.close()]);
      const keys = await redis.keys(`${topic}*`);
      if (keys.length > 0) await redis.del(...keys);
    }
  });

  it("takes a failed batch apart: the others are handled, the bad one goes on alone", async () => {
    const topic = `bus.batching-poison.${Date.now()}`;
    const [producer, consumer] = await Promise.all([busOn(TEST_REDIS_URL)(), busOn(TEST_REDIS_URL)({ partitions: 1 })]);
    try {
      for (const text of ["one", "two", "poison", "three"]) {
        await producer.publish({ topic, key: "k", type: "router.test.v1", payload: Buffer.from(text) });
      }
      const text = (e: { payload: Uint8Array }) => Buffer.from(e.payload).toString();
      const failedBatches: string[][] = [];
      const handled: string[] = [];
      await consumer.subscribe({
        topic,
        group: "g",
        maxAttempts: 2,
        handler: async (e) => {
          if (text(e) === "poison") throw new Error("cannot handle this");
          handled.push(text(e));
        },
        batchHandler: async (events) => {
          const texts = events.map(text);
          if (texts.includes("poison")) {
            failedBatches.push(texts);
            throw new Error("cannot handle this");
          }
          handled.push(...texts);
        },
      });
      await waitFor(() => handled.length === 3, { timeoutMs: 10_000, what: "the three good events" });
      expect(handled).toEqual(["one", "two", "three"]);
      expect(failedBatches).toEqual([["one", "two", "poison", "three"]]);
    } finally {
      await Promise.all([producer.close(), consumer.close()]);
      const keys = await redis.keys(`${topic}*`);
      if (keys.length > 0) await redis.del(...keys);
    }
  });
});
