import { ManualClock } from "@router/money";
import { AuthCache } from "../src/auth/auth-cache";
import type { StoredKey } from "../src/keys/key-store";

const key = (hash: string) => ({ hash, disabled: false }) as StoredKey;

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
  it("serves an entry younger than ten seconds and reloads at ten", async () => {
    const { clock, cache, counter } = countingCache();
    await cache.get("a");
    clock.advance(9_999);
    await cache.get("a");
    expect(counter.loads).toBe(1);
    clock.advance(1);
    await cache.get("a");
    expect(counter.loads).toBe(2);
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
    let release: (k: StoredKey) => void = () => undefined;
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
