import { EVICT_ALL } from "@router/http-kit";
import { ManualClock } from "@router/money";
import { AuthCache } from "../src/auth/auth-cache";
import type { KeyRecord } from "@router/api-keys";

const key = (hash: string) => ({ hash, disabled: false }) as KeyRecord;

/** A cache over a loader that counts its calls. */
function countingCache() {
  const clock = new ManualClock();
  const counter = { loads: 0 };
  const cache = new AuthCache(async (h) => {
    counter.loads++;
    return key(h);
  }, clock);
  return { clock, cache, counter };
}

describe("auth cache", () => {
  it("serves an entry younger than eight seconds without reloading, and never one of ten", async () => {
    const { clock, cache, counter } = countingCache();
    await cache.get("a");
    clock.advance(7_999);
    await cache.get("a");
    expect(counter.loads).toBe(1);
    clock.advance(2_001);
    await cache.get("a");
    expect(counter.loads).toBe(2);
    expect(cache.stats()).toMatchObject({ misses: 1, stale: 1, refreshes: 0 });
  });

  it("reloads an entry past four fifths of its lifetime in the background while it keeps serving the old one", async () => {
    const clock = new ManualClock();
    const versions: Array<(k: KeyRecord) => void> = [];
    const cache = new AuthCache((h) => new Promise<KeyRecord>((r) => versions.push(r)), clock);
    const first = cache.get("a");
    versions[0]?.({ ...key("a"), name: "v1" });
    expect((await first)?.name).toBe("v1");

    clock.advance(8_500);
    // Served at once from the entry, with one reload started however many callers ask.
    expect((await cache.get("a"))?.name).toBe("v1");
    expect((await cache.get("a"))?.name).toBe("v1");
    expect(versions).toHaveLength(2);
    expect(cache.stats().refreshes).toBe(1);

    versions[1]?.({ ...key("a"), name: "v2" });
    await new Promise((r) => setImmediate(r));
    expect((await cache.get("a"))?.name).toBe("v2");
    // The reload counts as read when it started (at 8.5 s): it serves until 18.5 s, reloading from 16.5 s.
    clock.advance(9_999);
    expect((await cache.get("a"))?.name).toBe("v2");
    expect(versions).toHaveLength(3);
  });

  it("keeps serving an entry whose background reload failed, until it expires", async () => {
    const clock = new ManualClock();
    let loads = 0;
    const cache = new AuthCache(async (h) => {
      loads++;
      if (loads > 1) throw new Error("database away");
      return key(h);
    }, clock);
    await cache.get("a");
    clock.advance(8_500);
    await expect(cache.get("a")).resolves.toMatchObject({ hash: "a" });
    await new Promise((r) => setImmediate(r));
    // The failure cleared the reload: the next hit tries again.
    await expect(cache.get("a")).resolves.toMatchObject({ hash: "a" });
    expect(loads).toBe(3);
    clock.advance(4_000);
    await expect(cache.get("a")).rejects.toThrow("database away");
  });

  it("answers a hit from the entry when the loader throws instead of rejecting", async () => {
    const clock = new ManualClock();
    let loads = 0;
    const cache = new AuthCache((h) => {
      loads++;
      if (loads > 1) throw new Error("loader broke");
      return Promise.resolve(key(h));
    }, clock);
    await cache.get("a");
    clock.advance(8_500);
    await expect(cache.get("a")).resolves.toMatchObject({ hash: "a" });
    clock.advance(4_000);
    await expect(cache.get("a")).rejects.toThrow("loader broke");
  });

  it("drops a background reload that an invalidation overtook", async () => {
    const clock = new ManualClock();
    let loads = 0;
    let releaseReload: (k: KeyRecord) => void = () => undefined;
    const cache = new AuthCache((h) => {
      loads++;
      // The second load (the background reload) waits until the test releases it.
      if (loads === 2) return new Promise((r) => (releaseReload = r));
      return Promise.resolve({ ...key(h), name: `load ${loads}` });
    }, clock);
    expect((await cache.get("a"))?.name).toBe("load 1");
    clock.advance(8_500);
    await cache.get("a");
    cache.invalidate("a");
    releaseReload({ ...key("a"), name: "read before the change" });
    await new Promise((r) => setImmediate(r));
    expect((await cache.get("a"))?.name).toBe("load 3");
  });

  it("loads once for concurrent lookups and again after an invalidation", async () => {
    const { cache, counter } = countingCache();
    await Promise.all([cache.get("a"), cache.get("a"), cache.get("a")]);
    expect(counter.loads).toBe(1);
    cache.invalidate("a");
    await cache.get("a");
    expect(counter.loads).toBe(2);
  });

  it("does not cache a load that an invalidation overtook", async () => {
    const clock = new ManualClock();
    let release: (k: KeyRecord) => void = () => undefined;
    let loads = 0;
    const cache = new AuthCache(
      (h) => {
        loads++;
        return loads === 1 ? new Promise((r) => (release = r)) : Promise.resolve(key(h));
      },
      clock,
    );
    const first = cache.get("a");
    cache.invalidate("a");
    release(key("a"));
    await first;
    await cache.get("a");
    expect(loads).toBe(2);
  });

  it("never serves an entry when the clock moved backwards", async () => {
    const { clock, cache, counter } = countingCache();
    await cache.get("a");
    clock.advance(-1);
    await cache.get("a");
    expect(counter.loads).toBe(2);
  });
});

describe("an eviction of every key", () => {
  it("drops the whole cache, so each key is read again", async () => {
    let loads = 0;
    const cache = new AuthCache(async () => {
      loads += 1;
      return null;
    }, new ManualClock());
    await cache.get("a");
    await cache.get("b");
    await cache.get("a");
    expect(loads).toBe(2);
    await cache.evict([EVICT_ALL]);
    await cache.get("a");
    await cache.get("b");
    expect(loads).toBe(4);
    cache.close();
  });
});
