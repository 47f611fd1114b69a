import type Redis from "ioredis";
import type { Db } from "@router/db";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";

/** What a cache that routing replicas evict together needs. */
export interface EvictedCacheOptions {
  db: Db;
  clock: Clock;
  log: Logger;
  /** Shared Redis: a write on any replica evicts the entry on every replica at once. */
  redis?: Redis;
  /** How long an entry in use is served before it is re-read in the background; default 5 s. */
  refreshMs?: number;
  /** Past this age an entry is read again before it is served; default 60 s. */
  ttlMs?: number;
}

/**
 * Tells every routing replica to forget a cache key, over a Redis pub/sub channel: `evict` drops
 * the key here at once and publishes it; each replica's subscriber drops it on receipt. Pub/sub is
 * fire-and-forget, so the caches that use it also re-read entries on a short refresh period.
 * Without Redis (embedded, one process) the eviction is local.
 */
export class ReplicaEviction {
  private readonly subscriber: Redis | undefined;

  constructor(
    private readonly channel: string,
    private readonly onEvict: (key: string) => void,
    private readonly log: Logger,
    private readonly redis?: Redis,
  ) {
    if (!redis) return;
    this.subscriber = redis.duplicate();
    this.subscriber.on("error", (err: unknown) => log.warn({ err, channel }, "routing.eviction.subscriber_error"));
    this.subscriber.on("message", (_channel: string, key: string) => onEvict(key));
    this.subscriber.subscribe(channel).catch((err: unknown) => {
      log.warn({ err, channel }, "routing.eviction.subscribe_failed");
    });
  }

  async evict(key: string): Promise<void> {
    this.onEvict(key);
    if (!this.redis) return;
    try {
      await this.redis.publish(this.channel, key);
    } catch (err) {
      // The other replicas re-read the entry within their refresh period.
      this.log.warn({ err, channel: this.channel }, "routing.eviction.publish_failed");
    }
  }

  close(): void {
    this.subscriber?.disconnect();
  }
}
