import { LRUCache } from "lru-cache";
import type { Clock } from "@router/money";

export interface LoadingCacheStats {
  hits: number;
  misses: number;
  stale: number;
  /** Hits that also started a reload in the background. */
  refreshes: number;
  size: number;
}

export interface LoadingCacheOptions {
  /** No entry is served at or past this age; the caller waits for a reload instead. */
  ttlMs: number;
  /**
   * A hit on an entry at least this old still serves it, and reloads it in the background; default
   * four fifths of `ttlMs` (a fifth of the lifetime left for the reload, and a quarter more loads
   * than without refreshing). Under steady traffic an entry is then replaced before it expires, so
   * no request waits on a reload; only the first after an idle spell does.
   */
  refreshAfterMs?: number;
  /** Entries kept; the least recently used is dropped first. Default 50,000. */
  maxEntries?: number;
}

/**
 * Reads the value of a key. `previous` is the entry being reloaded, if any: a loader may answer it
 * again when the source cannot be read, which keeps it serving for another `ttlMs`.
 */
export type Loader<V> = (key: string, previous: V | undefined) => Promise<V>;

// lru-cache stores no nullish values; a box lets `null` ("known to be absent") be cached too.
interface Box<V> {
  value: V;
}

// Constant per kind of call, so a hit allocates no options.
const SERVE_OR_JOIN = { allowStale: true } as const;
// lru-cache counts an entry as stale only past its ttl; at exactly the ttl it is already too old here.
const WAIT_FOR_RELOAD = { allowStale: false, forceRefresh: true } as const;
const EVEN_IF_STALE = { allowStale: true } as const;

/**
 * An in-process cache that loads missing entries itself, on lru-cache: one load per key however
 * many callers wait on it; no entry served at or past `ttlMs` (nor when the clock moved
 * backwards); entries refreshed in the background ahead of expiry while they are in use (a failed
 * refresh leaves the entry serving until it expires); `invalidate` also keeps a load already under
 * way from being stored, since it may have read the state from before the change. Time comes from
 * the injected clock.
 */
export class LoadingCache<V> {
  private readonly cache: LRUCache<string, Box<V>>;
  private readonly counters = { hits: 0, misses: 0, stale: 0, refreshes: 0 };
  private readonly ttlMs: number;
  private readonly refreshAfterMs: number;

  constructor(load: Loader<V>, clock: Clock, opts: LoadingCacheOptions) {
    this.ttlMs = opts.ttlMs;
    this.refreshAfterMs = opts.refreshAfterMs ?? opts.ttlMs * 0.8;
    this.cache = new LRUCache<string, Box<V>>({
      // Bounded by a size of one per entry rather than `max`: lru-cache preallocates a `max` bound's
      // arrays in full (about 2 MB per 50,000 entries, resident from the first start), where a size
      // bound grows them with the entries actually held.
      maxSize: opts.maxEntries ?? 50_000,
      sizeCalculation: () => 1,
      ttl: opts.ttlMs,
      // Every age is read from the injected clock, never from a value cached behind a timer.
      perf: { now: () => clock.now().getTime() },
      ttlResolution: 0,
      // A failed reload of an entry leaves it in place (expiry still applies); a failed first load
      // stores nothing.
      noDeleteOnFetchRejection: true,
      // An invalidation drops what a load in flight would store, but its callers still get its value.
      ignoreFetchAbort: true,
      fetchMethod: async (key, previous, { options }) => {
        // The entry counts as read when the load started, not when it finished: lru-cache stores the
        // answer with these options, and takes `start` (a set option) as the entry's birth time.
        Object.assign(options, { start: clock.now().getTime() });
        return { value: await load(key, previous?.value) };
      },
    });
  }

  get(key: string): Promise<V> {
    const remaining = this.cache.getRemainingTTL(key);
    // The common case, a fresh entry not yet due for a reload, is answered without lru-cache's
    // `fetch` (itself async): one settled promise instead of three.
    if (remaining > 0 && remaining <= this.ttlMs && this.ttlMs - remaining < this.refreshAfterMs) {
      // Nothing while a first load is in flight (not yet an entry): its callers wait for it below.
      const box = this.cache.get(key);
      if (box) {
        this.counters.hits++;
        return Promise.resolve(box.value);
      }
    }
    return this.loadOrJoin(key, remaining);
  }

  private async loadOrJoin(key: string, remaining: number): Promise<V> {
    if (remaining > 0 && remaining <= this.ttlMs) {
      // A first load still in flight is not yet an entry: its callers wait for it.
      if (!this.cache.has(key)) {
        this.counters.misses++;
        return this.fetched(await this.cache.fetch(key, SERVE_OR_JOIN));
      }
      // An entry here is old enough to reload (`get` answered the fresher ones): served as it is,
      // with one reload in the background however many hit it.
      this.counters.hits++;
      const status: LRUCache.Status<string, Box<V>> = {};
      const served = await this.cache.fetch(key, { allowStale: true, forceRefresh: true, status });
      if (status.fetch === "refresh") this.counters.refreshes++;
      return this.fetched(served);
    }
    if (remaining > this.ttlMs) {
      // The clock moved backwards: the entry's age is unknown, so it is read again.
      this.counters.stale++;
      this.cache.delete(key);
    } else if (this.cache.peek(key, EVEN_IF_STALE) === undefined) {
      this.counters.misses++;
    } else {
      this.counters.stale++;
    }
    return this.fetched(await this.cache.fetch(key, WAIT_FOR_RELOAD));
  }

  /** Stores a value read or written by the caller; a load in flight for the key no longer lands. */
  set(key: string, value: V): void {
    this.cache.set(key, { value });
  }

  invalidate(key: string): void {
    this.cache.delete(key);
  }

  /** Forgets every entry; loads under way no longer land either. */
  clear(): void {
    this.cache.clear();
  }

  private fetched(box: Box<V> | undefined): V {
    // The fetch method always answers a box, and a failed load rejects: no box means a bug here.
    if (!box) throw new Error("loading cache: a load answered nothing");
    return box.value;
  }

  stats(): LoadingCacheStats {
    return { ...this.counters, size: this.cache.size };
  }
}
