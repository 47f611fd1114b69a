import { createLogger } from "@router/logging";
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
