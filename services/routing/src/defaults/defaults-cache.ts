import type { Db } from "@router/db";
import { OrganisationStateCache } from "@router/loading-cache";
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

/**
 * Each organisation's routing defaults in memory, so Plan does not wait on the database: an
 * organisation is read on its first Plan, then served from memory and re-read in the background
 * at most every `refreshMs` (which is how a PUT on another replica arrives). A PUT in this process
 * replaces the entry at once, and a read already under way no longer lands. Organisations without
 * defaults are remembered too (as null).
 */
export class DefaultsCache {
  private readonly cache: OrganisationStateCache<RoutingDefaults | null>;

  constructor(opts: DefaultsCacheOptions) {
    this.cache = new OrganisationStateCache<RoutingDefaults | null>({ ...opts, load: (orgId) => loadDefaults(opts.db, orgId), loadFailedEvent: "routing.defaults.load_failed" });
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
  close(): Promise<void> {
    return this.cache.close();
  }
}
