import type { Clock } from "@router/money";

export interface LoadingCacheStats {
  hits: number;
  misses: number;
  stale: number;
  size: number;
}

interface Entry<V> {
  value: V;
  loadedAt: number;
}

/**
 * An in-process cache that loads missing entries itself: one load per key however many callers
 * wait on it, no entry served at or past `ttlMs` (nor when the clock moved backwards), and an
 * `invalidate` that also keeps a load already under way from being stored, since it may have read
 * the state from before the change.
 */
export class LoadingCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly inflight = new Map<string, Promise<V>>();
  private readonly counters = { hits: 0, misses: 0, stale: 0 };

  constructor(
    private readonly load: (key: string) => Promise<V>,
    private readonly clock: Clock,
    private readonly opts: { ttlMs: number; maxEntries?: number },
  ) {}

  async get(key: string): Promise<V> {
    const now = this.clock.now().getTime();
    const entry = this.entries.get(key);
    if (entry) {
      const age = now - entry.loadedAt;
      if (age >= 0 && age < this.opts.ttlMs) {
        this.counters.hits++;
        return entry.value;
      }
      this.counters.stale++;
      this.entries.delete(key);
    } else {
      this.counters.misses++;
    }
    const pending = this.inflight.get(key);
    if (pending) return pending;
    const loading = this.load(key).then(
      (value) => {
        if (this.inflight.get(key) === loading) {
          this.inflight.delete(key);
          this.store(key, value, now);
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
    if (this.entries.size >= (this.opts.maxEntries ?? 50_000)) {
      // Maps iterate in insertion order, so the first entry is the oldest load.
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, loadedAt });
  }
}
