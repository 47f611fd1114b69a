import type Redis from "ioredis";
import type { Db } from "@router/db";
import { OrganisationStateCache } from "@router/loading-cache";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { ReplicaEviction } from "../cache/replica-eviction";
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
  /** Shared Redis: a PUT on any replica makes every other replica read the defaults again at once. */
  redis?: Redis;
}

/** Redis channel on which a replica that stored an organisation's defaults tells the others. */
export const DEFAULTS_CHANGED_CHANNEL = "router:routing:defaults-changed";

/**
 * Each organisation's routing defaults in memory, so Plan does not wait on the database: an
 * organisation is read on its first Plan, then served from memory and re-read in the background
 * at most every `refreshMs`. A PUT in this process replaces the entry at once (a read already under
 * way no longer lands) and tells the other replicas over Redis to drop theirs; one that missed the
 * message catches up within `refreshMs`. Organisations without defaults are remembered too (as null).
 */
export class DefaultsCache {
  private readonly cache: OrganisationStateCache<RoutingDefaults | null>;
  private readonly eviction: ReplicaEviction | undefined;

  constructor(opts: DefaultsCacheOptions) {
    this.cache = new OrganisationStateCache<RoutingDefaults | null>({ ...opts, load: (orgId) => loadDefaults(opts.db, orgId), loadFailedEvent: "routing.defaults.load_failed" });
    if (opts.redis) this.eviction = new ReplicaEviction(DEFAULTS_CHANGED_CHANNEL, (orgId) => this.cache.invalidate(orgId), opts.log, opts.redis);
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
  async put(orgId: string, value: RoutingDefaults): Promise<void> {
    // Evicts here and publishes to the other replicas; the set below then stands here. This
    // replica's own message comes back too and costs one re-read of what it just stored.
    await this.eviction?.evict(orgId);
    this.cache.set(orgId, value);
  }

  /** Waits for reads in flight, so the caller may close the database. */
  close(): Promise<void> {
    this.eviction?.close();
    return this.cache.close();
  }
}
