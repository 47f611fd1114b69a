import type Redis from "ioredis";
import type { Db } from "@router/db";
import { LoadingCache } from "@router/loading-cache";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
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
  private readonly subscriber: Redis | undefined;

  constructor(private readonly deps: SessionDirectoryDeps) {
    this.cache = new LoadingCache((hash) => findSession(deps.db, hash), deps.clock, {
      ttlMs: deps.ttlMs ?? SESSION_CACHE_TTL_MS,
      maxEntries: 50_000,
    });
    if (deps.redis) {
      this.subscriber = deps.redis.duplicate();
      this.subscriber.on("error", (err: unknown) => deps.log.warn({ err }, "gateway.sessions.subscriber_error"));
      this.subscriber.on("message", (_channel: string, message: string) => {
        for (const hash of message.split(",")) if (hash) this.cache.invalidate(hash);
      });
      this.subscriber.subscribe(SESSIONS_ENDED_CHANNEL).catch((err: unknown) => {
        deps.log.warn({ err }, "gateway.sessions.subscribe_failed");
      });
    }
  }

  get(tokenHash: string): Promise<StoredSession | null> {
    return this.cache.get(tokenHash);
  }

  /** Forgets sessions that ended or changed, here and on every replica sharing Redis. */
  async evict(tokenHashes: readonly string[]): Promise<void> {
    if (tokenHashes.length === 0) return;
    for (const hash of tokenHashes) this.cache.invalidate(hash);
    if (!this.deps.redis) return;
    try {
      await this.deps.redis.publish(SESSIONS_ENDED_CHANNEL, tokenHashes.join(","));
    } catch (err) {
      // The other replicas still drop these sessions when their entries expire.
      this.deps.log.warn({ err, sessions: tokenHashes.length }, "gateway.sessions.publish_failed");
    }
  }

  stats() {
    return this.cache.stats();
  }

  close(): void {
    this.subscriber?.disconnect();
  }
}
