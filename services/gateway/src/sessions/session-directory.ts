import type Redis from "ioredis";
import type { Db } from "@router/db";
import { LoadingCache } from "@router/loading-cache";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { EvictionChannel } from "../replicas/eviction-channel";
import { findSession, type StoredSession } from "./session-store";

/** The same bound as keys: no instance serves a session's state older than this. */
export const SESSION_CACHE_TTL_MS = 10_000;

/** Redis channel on which a replica that ends sessions tells the others to forget them. */
export const SESSIONS_ENDED_CHANNEL = "router:gateway:sessions-ended";

export interface SessionDirectoryDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  /** Shared Redis: every replica drops an ended session at once, not within the TTL. */
  redis?: Redis;
  ttlMs?: number;
}

/**
 * Sessions by token hash: Postgres is the record, each replica keeps a short cache so a session
 * read costs what a key read costs. Ending sessions evicts them here and, through Redis pub/sub,
 * on every other replica; a replica that missed the message still drops them within the TTL.
 */
export class SessionDirectory {
  private readonly cache: LoadingCache<StoredSession | null>;
  private readonly evictions: EvictionChannel;

  constructor(deps: SessionDirectoryDeps) {
    this.cache = new LoadingCache((hash) => findSession(deps.db, hash), deps.clock, {
      ttlMs: deps.ttlMs ?? SESSION_CACHE_TTL_MS,
      maxEntries: 50_000,
    });
    this.evictions = new EvictionChannel({
      redis: deps.redis,
      channel: SESSIONS_ENDED_CHANNEL,
      log: deps.log,
      evictLocal: (hash) => this.cache.invalidate(hash),
    });
  }

  get(tokenHash: string): Promise<StoredSession | null> {
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
