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
  /** No entry is served at or past this age. */
  ttlMs: number;
  /**
   * A hit on an entry at least this old still serves it, and reloads it in the background; default
   * four fifths of `ttlMs` (a fifth of the lifetime left for the reload, and a quarter more loads
   * than without refreshing). Under steady traffic an entry is then replaced before it expires, so
   * no request waits on a reload; only the first after an idle spell does.
   */
  refreshAfterMs?: number;
  maxEntries?: number;
}

interface Entry<V> {
  value: V;
  loadedAt: number;
}

/**
 * An in-process cache that loads missing entries itself: one load per key however many callers
 * wait on it, no entry served at or past `ttlMs` (nor when the clock moved backwards), entries
 * refreshed ahead of expiry while they are in use, and an `invalidate` that also keeps a load
 * already under way from being stored, since it may have read the state from before the change.
 */
export class LoadingCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly inflight = new Map<string, Promise<V>>();
  private readonly counters = { hits: 0, misses: 0, stale: 0, refreshes: 0 };
  private readonly refreshAfterMs: number;

  constructor(
    private readonly load: (key: string) => Promise<V>,
    private readonly clock: Clock,
    private readonly opts: LoadingCacheOptions,
  ) {
    this.refreshAfterMs = opts.refreshAfterMs ?? opts.ttlMs * 0.8;
  }

  async get(key: string): Promise<V> {
    const now = this.clock.now().getTime();
    const entry = this.entries.get(key);
    if (entry) {
      const age = now - entry.loadedAt;
      if (age >= 0 && age < this.opts.ttlMs) {
        this.counters.hits++;
        if (age >= this.refreshAfterMs && !this.inflight.has(key)) {
          this.counters.refreshes++;
          // A failed refresh leaves the entry to serve until it expires; the next hit tries again.
          this.startLoad(key, now).catch(() => undefined);
        }
        return entry.value;
      }
      this.counters.stale++;
      this.entries.delete(key);
    } else {
      this.counters.misses++;
    }
    return this.inflight.get(key) ?? this.startLoad(key, now);
  }

  /** One load of `key`, stored as read at `startedAt` unless an invalidation overtook it. */
  private startLoad(key: string, startedAt: number): Promise<V> {
    let loaded: Promise<V>;
    try {
      loaded = this.load(key);
    } catch (err) {
      // A loader that throws instead of rejecting must not fail a hit that only meant to refresh.
      loaded = Promise.reject(err);
    }
    const loading = loaded.then(
      (value) => {
        if (this.inflight.get(key) === loading) {
          this.inflight.delete(key);
          this.store(key, value, startedAt);
        }
        return value;
      },
      (err: unknown) => {
        if (this.inflight.get(key) === loading) this.inflight.delete(key);
        throw err;
      },
    );
    this.inflight.set(key, loading);
    return loading;
  }

  invalidate(key: string): void {
    this.entries.delete(key);
    this.inflight.delete(key);
  }

  stats(): LoadingCacheStats {
    return { ...this.counters, size: this.entries.size };
  }

  private store(key: string, value: V, loadedAt: number): void {
    // A refreshed entry moves to the back of the insertion order, where the newest loads are.
    this.entries.delete(key);
    if (this.entries.size >= (this.opts.maxEntries ?? 50_000)) {
      // Maps iterate in insertion order, so the first entry is the oldest load.
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, loadedAt });
  }
}
