import type Redis from "ioredis";
import { LoadingCache } from "@router/loading-cache";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { EvictionChannel } from "../replicas/eviction-channel";
import type { SessionRecord } from "@router/access";

/** The same bound as keys: no instance serves a session's state older than this. */
export const SESSION_CACHE_TTL_MS = 10_000;

/** Redis channel on which a replica that ends sessions tells the others to forget them. */
export const SESSIONS_ENDED_CHANNEL = "router:gateway:sessions-ended";

export interface SessionDirectoryDeps {
  /** Asks the console, which owns sessions, on a miss (ConsoleService.FindSession). */
  load: (tokenHash: string) => Promise<SessionRecord | null>;
  clock: Clock;
  log: Logger;
  /** Shared Redis: every replica drops an ended session at once, not within the TTL. */
  redis?: Redis;
  ttlMs?: number;
}

/**
 * Sessions by token hash: the console holds the record, each replica keeps a short cache so a
 * session read costs what a key read costs. A session the console ended through this replica is
 * evicted here and, through Redis pub/sub, on every other replica; a replica that missed the
 * message still drops it within the TTL.
 */
export class SessionDirectory {
  private readonly cache: LoadingCache<SessionRecord | null>;
  private readonly evictions: EvictionChannel;

  constructor(deps: SessionDirectoryDeps) {
    this.cache = new LoadingCache(deps.load, deps.clock, {
      ttlMs: deps.ttlMs ?? SESSION_CACHE_TTL_MS,
      maxEntries: 50_000,
    });
    this.evictions = new EvictionChannel({
      shared: deps.redis ? { redis: deps.redis, log: deps.log } : undefined,
      channel: SESSIONS_ENDED_CHANNEL,
      evictLocal: (hash) => this.cache.invalidate(hash),
      evictAll: () => this.cache.clear(),
    });
  }

  get(tokenHash: string): Promise<SessionRecord | null> {
    return this.cache.get(tokenHash);
  }

  /** Forgets sessions that ended or changed, here and on every replica sharing Redis. */
  evict(tokenHashes: readonly string[]): Promise<void> {
    return this.evictions.evict(tokenHashes);
  }

  stats() {
    return this.cache.stats();
  }

  close(): void {
    this.evictions.close();
  }
}
