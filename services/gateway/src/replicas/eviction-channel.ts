import type Redis from "ioredis";
import { EVICT_ALL } from "@router/http-kit";
import type { Logger } from "@router/logging";

export interface EvictionChannelDeps {
  /** Shared Redis: without it, evictions stay on this replica (one process, or tests). */
  shared?: { redis: Redis; log: Logger };
  /** The pub/sub channel, one per kind of cached thing. */
  channel: string;
  /** Drops one entry from this replica's cache. */
  evictLocal(id: string): void;
  /** Drops every entry from this replica's cache (the id `EVICT_ALL`). */
  evictAll(): void;
}

/**
 * Tells every gateway replica sharing Redis to drop cache entries that changed (ended sessions,
 * paused or revoked keys) at once, rather than when their TTL runs out. Ids go over Redis pub/sub,
 * comma-separated (`EVICT_ALL` names every entry); a replica that misses a message (Redis away)
 * still drops the entry within the cache's TTL, so this only ever shortens that bound.
 */
export class EvictionChannel {
  private readonly subscriber: Redis | undefined;

  constructor(private readonly deps: EvictionChannelDeps) {
    const shared = deps.shared;
    if (!shared) return;
    this.subscriber = shared.redis.duplicate();
    this.subscriber.on("error", (err: unknown) => shared.log.warn({ err, channel: deps.channel }, "gateway.eviction.subscriber_error"));
    this.subscriber.on("message", (_channel: string, message: string) => this.evictHere(message.split(",")));
    this.subscriber.subscribe(deps.channel).catch((err: unknown) => {
      shared.log.warn({ err, channel: deps.channel }, "gateway.eviction.subscribe_failed");
    });
  }

  /** Drops the entries here and on every other replica. */
  async evict(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    this.evictHere(ids);
    const shared = this.deps.shared;
    if (!shared) return;
    try {
      await shared.redis.publish(this.deps.channel, ids.join(","));
    } catch (err) {
      // The other replicas still drop these entries when they expire.
      shared.log.warn({ err, channel: this.deps.channel, entries: ids.length }, "gateway.eviction.publish_failed");
    }
  }

  private evictHere(ids: readonly string[]): void {
    if (ids.includes(EVICT_ALL)) return this.deps.evictAll();
    for (const id of ids) if (id) this.deps.evictLocal(id);
  }

  close(): void {
    this.subscriber?.disconnect();
  }
}
