import type { Db } from "@router/db";
import { LoadingCache } from "@router/loading-cache";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { loadDefaults } from "./defaults-store";
import type { RoutingDefaults } from "./routing-defaults";

export interface DefaultsCacheOptions {
  db: Db;
  clock: Clock;
  log: Logger;
  /** How long a read is served before it is read again (in the background); default 5 s. */
  refreshMs?: number;
  /**
   * Past this age an entry is no longer served while it is re-read: the caller waits for the read.
   * Bounds how stale an organisation that plans rarely can be; default 60 s.
   */
  maxStaleMs?: number;
  /** Organisations remembered; the least recently planned is forgotten first. Default 100,000. */
  maxEntries?: number;
}

const DEFAULT_REFRESH_MS = 5_000;
const DEFAULT_MAX_STALE_MS = 60_000;
const DEFAULT_MAX_ENTRIES = 100_000;

/**
 * Each organisation's routing defaults in memory, so Plan does not wait on the database: an
 * organisation is read on its first Plan, then served from memory and re-read in the background
 * at most every `refreshMs` (which is how a PUT on another replica arrives). A PUT in this process
 * replaces the entry at once, and a read already under way no longer lands. Organisations without
 * defaults are remembered too (as null).
 */
export class DefaultsCache {
  private readonly cache: LoadingCache<RoutingDefaults | null>;
  private readonly reading = new Set<Promise<unknown>>();

  constructor(private readonly opts: DefaultsCacheOptions) {
    const refreshMs = opts.refreshMs ?? DEFAULT_REFRESH_MS;
    this.cache = new LoadingCache((orgId, previous) => this.read(orgId, previous), opts.clock, {
      ttlMs: Math.max(opts.maxStaleMs ?? DEFAULT_MAX_STALE_MS, refreshMs),
      refreshAfterMs: refreshMs,
      maxEntries: opts.maxEntries ?? DEFAULT_MAX_ENTRIES,
    });
  }

  /**
   * The organisation's defaults; null only when they have never been read and cannot be read now
   * (the database is unreachable), so the caller can tell "none set" from "unknown".
   */
  async get(orgId: string): Promise<RoutingDefaults | null> {
    try {
      return await this.cache.get(orgId);
    } catch {
      // Logged by the read; nothing was stored, so the next Plan reads again.
      return null;
    }
  }

  /** Takes the set a PUT in this process just stored, so this process's next Plan uses it. */
  put(orgId: string, value: RoutingDefaults): void {
    this.cache.set(orgId, value);
  }

  /** Waits for reads in flight, so the caller may close the database. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.reading]);
  }

  private async read(orgId: string, previous: RoutingDefaults | null | undefined): Promise<RoutingDefaults | null> {
    const reading = loadDefaults(this.opts.db, orgId);
    this.reading.add(reading);
    try {
      return await reading;
    } catch (err) {
      this.opts.log.warn({ err, orgId }, "routing.defaults.load_failed");
      // Keep serving what we had for another period rather than retrying on every Plan.
      if (previous !== undefined) return previous;
      throw err;
    } finally {
      this.reading.delete(reading);
    }
  }
}
