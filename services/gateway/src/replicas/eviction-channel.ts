import type Redis from "ioredis";
import type { Logger } from "@router/logging";

export interface EvictionChannelDeps {
  /** Shared Redis: without it, evictions stay on this replica (one process, or tests). */
  redis?: Redis;
  /** The pub/sub channel, one per kind of cached thing. */
  channel: string;
  log: Logger;
  /** Drops one entry from this replica's cache. */
  evictLocal(id: string): void;
}

/**
 * Tells every gateway replica sharing Redis to drop cache entries that changed (ended sessions,
 * paused or revoked keys) at once, rather than when their TTL runs out. Ids go over Redis pub/sub,
 * comma-separated; a replica that misses a message (Redis away) still drops the entry within the
 * cache's TTL, so this only ever shortens that bound.
 */
export class EvictionChannel {
  private readonly subscriber: Redis | undefined;

  constructor(private readonly deps: EvictionChannelDeps) {
    if (!deps.redis) return;
    this.subscriber = deps.redis.duplicate();
    this.subscriber.on("error", (err: unknown) => deps.log.warn({ err, channel: deps.channel }, "gateway.eviction.subscriber_error"));
    this.subscriber.on("message", (_channel: string, message: string) => {
      for (const id of message.split(",")) if (id) deps.evictLocal(id);
    });
    this.subscriber.subscribe(deps.channel).catch((err: unknown) => {
      deps.log.warn({ err, channel: deps.channel }, "gateway.eviction.subscribe_failed");
    });
  }

  /** Drops the entries here and on every other replica. */
  async evict(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    for (const id of ids) this.deps.evictLocal(id);
    if (!this.deps.redis) return;
    try {
      await this.deps.redis.publish(this.deps.channel, ids.join(","));
    } catch (err) {
      // The other replicas still drop these entries when they expire.
      this.deps.log.warn({ err, channel: this.deps.channel, entries: ids.length }, "gateway.eviction.publish_failed");
    }
  }

  close(): void {
    this.subscriber?.disconnect();
  }
}
