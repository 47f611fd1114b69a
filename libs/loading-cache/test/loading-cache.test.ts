import { ManualClock } from "@router/money";
import { LoadingCache } from "@router/loading-cache";

/** A loader whose answers the test hands out one at a time, recording each key asked for. */
function heldLoader<V>() {
  const asked: Array<{ key: string; previous: V | undefined; answer(v: V): void; fail(e: Error): void }> = [];
  const load = (key: string, previous: V | undefined) =>
    new Promise<V>((answer, fail) => asked.push({ key, previous, answer, fail }));
  return { asked, load };
}

const settle = () => new Promise((r) => setImmediate(r));

describe("loading cache", () => {
  it("forgets the least recently read entry first when full", async () => {
    const clock = new ManualClock();
    const loads: string[] = [];
    const cache = new LoadingCache(
      async (k) => {
        loads.push(k);
        return k.toUpperCase();
      },
      clock,
      { ttlMs: 10_000, maxEntries: 2 },
    );
    await cache.get("a");
    await cache.get("b");
    await cache.get("a"); // a is now the most recently read
    await cache.get("c"); // evicts b, not a
    await cache.get("a");
    await cache.get("b");
    expect(loads).toEqual(["a", "b", "c", "b"]);
    expect(cache.stats().size).toBe(2);
  });

  it("counts an entry's age from when its load started, not when it finished", async () => {
    const clock = new ManualClock();
    const { asked, load } = heldLoader<string>();
    // No reload ahead of expiry here: only the age decides.
    const cache = new LoadingCache(load, clock, { ttlMs: 10_000, refreshAfterMs: 10_000 });
    const first = cache.get("a");
    clock.advance(3_000);
    asked[0]?.answer("v1");
    expect(await first).toBe("v1");
    clock.advance(6_999); // 9.999 s after the read started
    expect(await cache.get("a")).toBe("v1");
    clock.advance(1); // exactly 10 s after it started: too old to serve
    const again = cache.get("a");
    await settle();
    expect(asked).toHaveLength(2);
    asked[1]?.answer("v2");
    expect(await again).toBe("v2");
  });

  it("hands the entry being reloaded to the loader", async () => {
    const clock = new ManualClock();
    const { asked, load } = heldLoader<string>();
    const cache = new LoadingCache(load, clock, { ttlMs: 10_000, refreshAfterMs: 5_000 });
    const first = cache.get("a");
    asked[0]?.answer("v1");
    await first;
    clock.advance(5_000);
    expect(await cache.get("a")).toBe("v1");
    expect(asked.map((a) => a.previous)).toEqual([undefined, "v1"]);
  });

  it("keeps a value set while a load was in flight over what that load read", async () => {
    const clock = new ManualClock();
    const { asked, load } = heldLoader<string>();
    const cache = new LoadingCache(load, clock, { ttlMs: 10_000, refreshAfterMs: 5_000 });
    const first = cache.get("a");
    asked[0]?.answer("v1");
    await first;
    clock.advance(5_000);
    await cache.get("a"); // starts a background reload
    cache.set("a", "written here");
    asked[1]?.answer("read before the write");
    await settle();
    expect(await cache.get("a")).toBe("written here");
  });

  it("stores nothing when a first load fails, and reads again on the next get", async () => {
    const clock = new ManualClock();
    const { asked, load } = heldLoader<string>();
    const cache = new LoadingCache(load, clock, { ttlMs: 10_000 });
    const failed = cache.get("a");
    asked[0]?.fail(new Error("source away"));
    await expect(failed).rejects.toThrow("source away");
    const again = cache.get("a");
    asked[1]?.answer("v1");
    expect(await again).toBe("v1");
    expect(cache.stats()).toMatchObject({ misses: 2, hits: 0, size: 1 });
  });

  it("serves a fresh entry to callers that ask while its first load is still in flight, with one load", async () => {
    const clock = new ManualClock();
    const { asked, load } = heldLoader<string>();
    const cache = new LoadingCache(load, clock, { ttlMs: 10_000 });
    const first = cache.get("a");
    const joined = cache.get("a");
    asked[0]?.answer("v1");
    expect(await Promise.all([first, joined])).toEqual(["v1", "v1"]);
    expect(await cache.get("a")).toBe("v1");
    expect(asked).toHaveLength(1);
    expect(cache.stats()).toMatchObject({ misses: 2, hits: 1 });
  });

  it("caches null as a value", async () => {
    const clock = new ManualClock();
    let loads = 0;
    const cache = new LoadingCache<string | null>(
      async () => {
        loads++;
        return null;
      },
      clock,
      { ttlMs: 10_000 },
    );
    expect(await cache.get("unknown")).toBeNull();
    expect(await cache.get("unknown")).toBeNull();
    expect(loads).toBe(1);
    expect(cache.stats()).toMatchObject({ misses: 1, hits: 1 });
  });
});
