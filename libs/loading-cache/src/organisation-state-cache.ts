import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { LoadingCache, type LoadingCacheStats } from "./loading-cache";

export interface OrganisationStateCacheOptions<V> {
  /** Reads one organisation's state from the service's own store. */
  load: (orgId: string) => Promise<V>;
  clock: Clock;
  log: Logger;
  /** The log line of a failed read, e.g. `routing.defaults.load_failed`. */
  loadFailedEvent: string;
  /** How long a read is served before it is read again in the background (how a write on another replica arrives). Default 5 s. */
  refreshMs?: number;
  /** Past this age an entry is no longer served: the caller waits for the read. Default 60 s. */
  maxStaleMs?: number;
  /** Organisations remembered; the least recently used is forgotten first. Default 100,000. */
  maxEntries?: number;
}

export const DEFAULT_STATE_REFRESH_MS = 5_000;
const DEFAULT_MAX_STALE_MS = 60_000;
const DEFAULT_MAX_ENTRIES = 100_000;

/**
 * One organisation's settings from a service's store, kept in memory for a hot path: read on first
 * use, then served from memory and read again in the background at most every `refreshMs`. A read
 * that fails keeps serving what was there (logged) rather than reading again on every call; one
 * that never succeeded rejects, so the caller can tell "none set" from "unknown". Reads in flight
 * are tracked so the store can be closed after them.
 */
export class OrganisationStateCache<V> {
  private readonly cache: LoadingCache<V>;
  private readonly reading = new Set<Promise<unknown>>();

  constructor(private readonly opts: OrganisationStateCacheOptions<V>) {
    const refreshMs = opts.refreshMs ?? DEFAULT_STATE_REFRESH_MS;
    this.cache = new LoadingCache<V>((orgId, previous) => this.read(orgId, previous), opts.clock, {
      ttlMs: Math.max(opts.maxStaleMs ?? DEFAULT_MAX_STALE_MS, refreshMs),
      refreshAfterMs: refreshMs,
      maxEntries: opts.maxEntries ?? DEFAULT_MAX_ENTRIES,
    });
  }

  get(orgId: string): Promise<V> {
    return this.cache.get(orgId);
  }

  /** A value this process just stored: its next call uses it. */
  set(orgId: string, value: V): void {
    this.cache.set(orgId, value);
  }

  /** After a write in this process: the next call reads again. */
  invalidate(orgId: string): void {
    this.cache.invalidate(orgId);
  }

  stats(): LoadingCacheStats {
    return this.cache.stats();
  }

  /** Waits for reads in flight, so the caller may close the store. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.reading]);
  }

  private async read(orgId: string, previous: V | undefined): Promise<V> {
    const reading = this.opts.load(orgId);
    this.reading.add(reading);
    try {
      return await reading;
    } catch (err) {
      this.opts.log.warn({ err, orgId }, this.opts.loadFailedEvent);
      if (previous !== undefined) return previous;
      throw err;
    } finally {
      this.reading.delete(reading);
    }
  }
}
