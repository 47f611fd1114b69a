import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Redis from "ioredis";
import { createLogger } from "@router/logging";
import { TcpProxy, TEST_REDIS_URL, waitFor } from "@router/testkit";
import { createBus, createRedisIdempotencyStore, type BusConfig } from "../src";
import { runBusContract, type ContractOptions, type MakeBus } from "./contract";

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

/** Buses from `makeBus` that write packed stream entries. */
const writingPacked =
  (makeBus: MakeBus): MakeBus =>
  (overrides) =>
    makeBus({ redisEntryLayout: "packed", ...overrides });

/** The contract's options, its outage's buses made as `layout` makes them. */
const contractOptions = (layout: (makeBus: MakeBus) => MakeBus): ContractOptions => ({
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
      makeBus: layout(busOn(`redis://127.0.0.1:${proxy.port}`)),
      cut: () => proxy.cut(),
      restore: () => proxy.restore(),
      close: () => proxy.close(),
    };
  },
});

runBusContract("redis", busOn(TEST_REDIS_URL), contractOptions((makeBus) => makeBus));
// Every guarantee holds whichever layout the publishers write.
runBusContract("redis (packed entries)", writingPacked(busOn(TEST_REDIS_URL)), contractOptions(writingPacked));

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

  it("gathers for a subscription's own batchWaitMs, not the bus's, between reads", async () => {
    const topic = `bus.gathering.${Date.now()}`;
    const [producer, consumer] = await Promise.all([busOn(TEST_REDIS_URL)(), busOn(TEST_REDIS_URL)({ partitions: 1, batchWaitMs: 1_500 })]);
    try {
      const handled: Record<string, string[]> = { prompt: [], gathering: [] };
      const subscribe = (group: "prompt" | "gathering", batchWaitMs?: number) =>
        consumer.subscribe({
          topic,
          group,
          batchWaitMs,
          handler: async (e) => void handled[group]!.push(Buffer.from(e.payload).toString()),
          batchHandler: async (events) => void handled[group]!.push(...events.map((e) => Buffer.from(e.payload).toString())),
        });
      await Promise.all([subscribe("prompt", 0), subscribe("gathering")]);
      await producer.publish({ topic, key: "k", type: "router.test.v1", payload: Buffer.from("first") });
      await waitFor(() => handled.prompt!.length === 1 && handled.gathering!.length === 1, { what: "the first event in both groups" });
      // After a read, the gathering group waits 1.5 s before reading again; the other reads at once.
      const sentAt = Date.now();
      await producer.publish({ topic, key: "k", type: "router.test.v1", payload: Buffer.from("second") });
      await waitFor(() => handled.prompt!.length === 2, { what: "the second event, promptly" });
      expect(Date.now() - sentAt).toBeLessThan(1_000);
      expect(handled.gathering).toEqual(["first"]);
      await waitFor(() => handled.gathering!.length === 2, { what: "the second event, gathered", timeoutMs: 5_000 });
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

describe("redis stream entry layouts", () => {
  it("reads the entries of publishers of either layout on one topic, in order, with their headers", async () => {
    const topic = `bus.layouts.${Date.now()}`;
    // An install midway through choosing packed entries: one publisher already writes them.
    const [fields, packed, consumer] = await Promise.all([
      busOn(TEST_REDIS_URL)({ partitions: 1 }),
      busOn(TEST_REDIS_URL)({ partitions: 1, redisEntryLayout: "packed" }),
      busOn(TEST_REDIS_URL)({ partitions: 1 }),
    ]);
    try {
      const sent = ["a", "b", "c", "d"].map((text, i) => ({ text, bus: i % 2 === 0 ? fields : packed }));
      for (const { text, bus } of sent) {
        await bus.publish({ topic, key: "k", type: "router.test.v1", id: `id-${text}`, payload: Buffer.from(text), headers: { note: `n-${text}` } });
      }
      const entries = await redis.xrange(`${topic}:p0`, "-", "+");
      expect(entries.map(([, f]) => f.length)).toEqual([12, 2, 12, 2]);
      const got: Array<{ id: string; type: string; key: string; text: string; note?: string }> = [];
      await consumer.subscribe({
        topic,
        group: "g",
        handler: async (e) => void got.push({ id: e.id, type: e.type, key: e.key, text: Buffer.from(e.payload).toString(), note: e.headers.note }),
      });
      await waitFor(() => got.length === sent.length, { what: "every event" });
      expect(got).toEqual(sent.map(({ text }) => ({ id: `id-${text}`, type: "router.test.v1", key: "k", text, note: `n-${text}` })));
    } finally {
      await Promise.all([fields.close(), packed.close(), consumer.close()]);
      const keys = await redis.keys(`${topic}*`);
      if (keys.length > 0) await redis.del(...keys);
    }
  });

  it("refuses a layout it does not know, naming the setting", async () => {
    await expect(busOn(TEST_REDIS_URL)({ redisEntryLayout: "compact" as "packed" })).rejects.toThrow(/redisEntryLayout.*fields, packed/);
  });
});

describe("redis consumer groups named after their topic", () => {
  const text = (e: { payload: Uint8Array }) => Buffer.from(e.payload).toString();

  /** Ten events on a one-partition topic, and the group the service had before, read up to `read`, acknowledged up to `acked`. */
  async function topicWithFormerGroup(label: string, read: number, acked: number) {
    const topic = `bus.${label}.${Date.now()}`;
    const producer = await busOn(TEST_REDIS_URL)({ partitions: 1 });
    const texts = Array.from({ length: 10 }, (_, i) => `e${i}`);
    for (const t of texts) await producer.publish({ topic, key: "k", type: "router.test.v1", payload: Buffer.from(t) });
    await producer.close();
    const stream = `${topic}:p0`;
    await redis.call("XGROUP", "CREATE", stream, "alerts", "0");
    const ids = (await redis.xrange(stream, "-", "+")).map(([id]) => id).slice(0, read);
    await redis.xreadgroup("GROUP", "alerts", "old-member", "COUNT", read, "STREAMS", stream, ">");
    if (acked > 0) await redis.xack(stream, "alerts", ...ids.slice(0, acked));
    return { topic, texts };
  }

  async function consume(topic: string, group: string, expected: number) {
    const consumer = await busOn(TEST_REDIS_URL)({ partitions: 1 });
    const got: string[] = [];
    await consumer.subscribe({ topic, group, handler: async (e) => void got.push(text(e)) });
    await waitFor(() => got.length >= expected, { what: `${expected} events` });
    // Anything replayed beyond what is expected would arrive now.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await consumer.close();
    return got;
  }

  afterEach(async () => {
    const keys = await redis.keys("bus.group-*");
    if (keys.length > 0) await redis.del(...keys);
  });

  it("start where the service's former group stood, its unacknowledged entries included", async () => {
    // The old group read e0..e5 and acknowledged e0..e3: e4 and e5 were delivered, never done.
    const { topic } = await topicWithFormerGroup("group-pending", 6, 4);
    expect(await consume(topic, "alerts", 6)).toEqual(["e4", "e5", "e6", "e7", "e8", "e9"]);
  });

  it("start after the last event the former group delivered when it left nothing pending", async () => {
    const { topic } = await topicWithFormerGroup("group-acked", 6, 6);
    expect(await consume(topic, "alerts", 4)).toEqual(["e6", "e7", "e8", "e9"]);
  });

  it("start at the beginning for a service that had no group on the topic", async () => {
    const { topic, texts } = await topicWithFormerGroup("group-new", 6, 6);
    expect(await consume(topic, "reports", 10)).toEqual(texts);
  });
});

describe("a redis consumer that cannot go on", () => {
  it("retries an error that is not an outage a few times, then stops and calls onFatal", async () => {
    const topic = `bus.group-fatal.${Date.now()}`;
    const fatal: Error[] = [];
    const consumer = await busOn(TEST_REDIS_URL)({ partitions: 1, onFatal: (err) => void fatal.push(err) });
    try {
      await consumer.subscribe({ topic, group: "alerts", handler: async () => undefined });
      // Its stream replaced by a key of another type: every read is refused (WRONGTYPE).
      await redis.del(`${topic}:p0`);
      await redis.set(`${topic}:p0`, "not a stream");
      await waitFor(() => fatal.length > 0, { timeoutMs: 10_000, what: "onFatal" });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(fatal).toHaveLength(1);
      expect(fatal[0]?.message).toMatch(/WRONGTYPE/);
    } finally {
      await consumer.close();
      const keys = await redis.keys(`${topic}*`);
      if (keys.length > 0) await redis.del(...keys);
    }
  });
});
