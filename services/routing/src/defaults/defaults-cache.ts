import type { Db } from "@router/db";
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
  /** Organisations remembered; the one read from the store longest ago is forgotten first. Default 100,000. */
  maxEntries?: number;
}

const DEFAULT_REFRESH_MS = 5_000;
const DEFAULT_MAX_STALE_MS = 60_000;
const DEFAULT_MAX_ENTRIES = 100_000;

interface Entry {
  value: RoutingDefaults;
  loadedAt: number;
  /** Bumped by every `put`; a read that started before one must not overwrite it. */
  seq: number;
}

/**
 * Each organisation's routing defaults in memory, so Plan does not wait on the database: an
 * organisation is read on its first Plan, then served from memory and re-read in the background
 * at most every `refreshMs` (which is how a PUT on another replica arrives). A PUT in this process
 * replaces the entry at once. Organisations without defaults are remembered too.
 */
export class DefaultsCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<RoutingDefaults | null>>();
  private readonly refreshMs: number;
  private readonly maxStaleMs: number;
  private readonly maxEntries: number;
  private seq = 0;

  constructor(private readonly opts: DefaultsCacheOptions) {
    this.refreshMs = opts.refreshMs ?? DEFAULT_REFRESH_MS;
    this.maxStaleMs = Math.max(opts.maxStaleMs ?? DEFAULT_MAX_STALE_MS, this.refreshMs);
    this.maxEntries = opts.maxEntries ?? DEFAULT_MAX_ENTRIES;
  }

  /**
   * The organisation's defaults; null only when they have never been read and cannot be read now
   * (the database is unreachable), so the caller can tell "none set" from "unknown".
   */
  async get(orgId: string): Promise<RoutingDefaults | null> {
    const entry = this.entries.get(orgId);
    if (entry) {
      const age = this.opts.clock.now().getTime() - entry.loadedAt;
      if (age < this.refreshMs) return entry.value;
      if (age < this.maxStaleMs) {
        void this.load(orgId);
        return entry.value;
      }
    }
    return this.load(orgId);
  }

  /** Takes the set a PUT in this process just stored, so this process's next Plan uses it. */
  put(orgId: string, value: RoutingDefaults): void {
    this.seq += 1;
    this.remember(orgId, { value, loadedAt: this.opts.clock.now().getTime(), seq: this.seq });
  }

  /** Waits for reads in flight, so the caller may close the database. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.loading.values()]);
  }

  // Concurrent Plans for one organisation share one read.
  private load(orgId: string): Promise<RoutingDefaults | null> {
    const inFlight = this.loading.get(orgId);
    if (inFlight) return inFlight;
    const seq = this.entries.get(orgId)?.seq ?? 0;
    const read = (async () => {
      try {
        const value = await loadDefaults(this.opts.db, orgId);
        const current = this.entries.get(orgId);
        // A PUT landed while this read ran; what it stored is newer than what was read.
        if (current && current.seq !== seq) return current.value;
        this.remember(orgId, { value, loadedAt: this.opts.clock.now().getTime(), seq });
        return value;
      } catch (err) {
        this.opts.log.warn({ err, orgId }, "routing.defaults.load_failed");
        const current = this.entries.get(orgId);
        if (!current) return null;
        // Keep serving what we had for another period rather than retrying on every Plan.
        current.loadedAt = this.opts.clock.now().getTime();
        return current.value;
      } finally {
        this.loading.delete(orgId);
      }
    })();
    this.loading.set(orgId, read);
    return read;
  }

  // Re-inserting moves the organisation to the back of the Map's order, which is the eviction order.
  private remember(orgId: string, entry: Entry): void {
    this.entries.delete(orgId);
    this.entries.set(orgId, entry);
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }
}
