import { createLogger } from "@router/logging";
import { waitFor } from "@router/testkit";
import { createBus } from "../src";
import { runBusContract } from "./contract";

const log = createLogger({ level: process.env.LOG_LEVEL ?? "silent" });

runBusContract("memory", (overrides) =>
  createBus({
    kind: "memory",
    clientId: "memory-contract",
    log,
    reclaimIdleMs: 300,
    retryDelayMs: 10,
    closeTimeoutMs: 500,
    ...overrides,
  }),
);

test("memory bus: events waiting on a partition reach the batch handler together, in order", async () => {
  const bus = await createBus({ kind: "memory", clientId: "memory-batches", log, partitions: 1 });
  const topic = `batches-${Date.now()}`;
  const sizes: number[] = [];
  const seen: number[] = [];
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  const take = (n: number) => {
    seen.push(n);
    if (seen.length === 50) done();
  };
  await bus.subscribe({
    topic,
    group: "g",
    handler: async (e) => take(Number(Buffer.from(e.payload).toString())),
    batchHandler: async (batch) => {
      sizes.push(batch.length);
      for (const e of batch) take(Number(Buffer.from(e.payload).toString()));
    },
  });
  // Published within one turn: they are all waiting when the consumer is first handed work.
  await Promise.all(Array.from({ length: 50 }, (_, i) => bus.publish({ topic, key: "k", type: "t", payload: Buffer.from(String(i)) })));
  await all;
  expect(seen).toEqual(Array.from({ length: 50 }, (_, i) => i));
  expect(sizes).toEqual([50]);
  await bus.close();
});

test("memory bus: a subscription's own batchWaitMs replaces the bus's", async () => {
  const bus = await createBus({ kind: "memory", clientId: "memory-gather", log, partitions: 1, batchWaitMs: 1_000 });
  const topic = `gather-${Date.now()}`;
  const handledAt: Record<string, number> = {};
  const subscribe = (group: string, batchWaitMs?: number | (() => number | undefined)) =>
    bus.subscribe({
      topic,
      group,
      batchWaitMs,
      handler: async () => void (handledAt[group] = Date.now()),
      batchHandler: async () => void (handledAt[group] = Date.now()),
    });
  await subscribe("prompt", 0);
  await subscribe("gathering");
  // Decided before each gather: a function answering 0, and one leaving it to the bus (undefined).
  await subscribe("decided-prompt", () => 0);
  await subscribe("decided-bus", () => undefined);
  const sentAt = Date.now();
  await bus.publish({ topic, key: "k", type: "t", payload: Buffer.from("1") });
  await waitFor(() => handledAt.gathering !== undefined && handledAt["decided-bus"] !== undefined, { what: "the gathering groups' deliveries", timeoutMs: 5_000 });
  expect(handledAt.prompt! - sentAt).toBeLessThan(500);
  expect(handledAt["decided-prompt"]! - sentAt).toBeLessThan(500);
  expect(handledAt.gathering! - sentAt).toBeGreaterThanOrEqual(900);
  expect(handledAt["decided-bus"]! - sentAt).toBeGreaterThanOrEqual(900);
  await bus.close();
});

test("memory bus: refuses a negative batchWaitMs on a subscription, naming it", async () => {
  const bus = await createBus({ kind: "memory", clientId: "memory-gather-bad", log });
  await expect(bus.subscribe({ topic: "t", group: "g", batchWaitMs: -1, handler: async () => undefined })).rejects.toThrow(/batchWaitMs/);
  await bus.close();
});
