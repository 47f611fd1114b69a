import { createLogger } from "@router/logging";
import { createBus } from "../src";

const log = createLogger({ level: process.env.LOG_LEVEL ?? "silent" });
const payload = (s: string) => Buffer.from(s);
const text = (p: Uint8Array) => Buffer.from(p).toString();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("draining the in-process bus (the one-process runner's shutdown)", () => {
  it("waits until every live group has written what was published, events its handlers publish meanwhile included", async () => {
    const bus = await createBus({ kind: "memory", clientId: "drain", namespace: `drain${Date.now()}`, log, batchWaitMs: 50 });
    const written: string[] = [];
    const followUps: string[] = [];
    await bus.subscribe({
      topic: "completed",
      group: "activity",
      handler: async (e) => {
        await sleep(20);
        written.push(text(e.payload));
        await bus.publish({ topic: "crossed", key: e.key, type: "t", payload: e.payload });
      },
      batchHandler: async (events) => {
        await sleep(100);
        for (const e of events) {
          written.push(text(e.payload));
          await bus.publish({ topic: "crossed", key: e.key, type: "t", payload: e.payload });
        }
      },
    });
    await bus.subscribe({
      topic: "crossed",
      group: "alerts",
      handler: async (e) => {
        await sleep(5);
        followUps.push(text(e.payload));
      },
    });
    const sent = Array.from({ length: 20 }, (_, i) => String(i));
    for (const s of sent) await bus.publish({ topic: "completed", key: `k${Number(s) % 3}`, type: "t", payload: payload(s) });

    expect(written.length).toBeLessThan(sent.length);
    expect(await bus.drain(5_000)).toBe(true);
    expect([...written].sort()).toEqual([...sent].sort());
    expect([...followUps].sort()).toEqual([...sent].sort());
    await bus.close();
  });

  it("gives up at its deadline while a handler keeps failing, and says so", async () => {
    const bus = await createBus({ kind: "memory", clientId: "drain-stuck", namespace: `stuck${Date.now()}`, log, retryDelayMs: 50 });
    await bus.subscribe({
      topic: "completed",
      group: "activity",
      handler: async () => {
        throw new Error("database away");
      },
    });
    await bus.publish({ topic: "completed", key: "k", type: "t", payload: payload("x") });
    const started = Date.now();
    expect(await bus.drain(300)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    await bus.close();
  });

  it("does not wait for a group whose members all left (a service already stopped)", async () => {
    const bus = await createBus({ kind: "memory", clientId: "drain-left", namespace: `left${Date.now()}`, log });
    const sub = await bus.subscribe({ topic: "flagged", group: "gateway", handler: async () => undefined });
    await sub.close();
    await bus.publish({ topic: "flagged", key: "k", type: "t", payload: payload("x") });
    expect(await bus.drain(1_000)).toBe(true);
    await bus.close();
  });
});
