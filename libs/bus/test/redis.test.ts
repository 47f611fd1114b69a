import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Redis from "ioredis";
import { createLogger } from "@router/logging";
import { TEST_REDIS_URL } from "@router/testkit";
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
