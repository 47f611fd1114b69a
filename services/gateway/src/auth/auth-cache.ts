import type Redis from "ioredis";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import type { KeyRecord } from "@router/api-keys";
import { LoadingCache } from "@router/loading-cache";
import { EvictionChannel } from "../replicas/eviction-channel";

/** The product's bound: no instance serves a key's state older than this. */
export const AUTH_CACHE_TTL_MS = 10_000;

/** Redis channel on which a replica that changed keys (paused, resumed, revoked) tells the others. */
export const KEYS_CHANGED_CHANNEL = "router:gateway:keys-changed";

export interface AuthCacheOptions {
  ttlMs?: number;
  /** Shared Redis: `evict` then reaches every replica at once, not within the TTL. */
  shared?: { redis: Redis; log: Logger };
}

/**
 * Key lookups by hash. The instance that changes a key evicts its entry at once, and with shared
 * Redis every other instance too; an instance that missed the message sees the change when its
 * entry expires. Unknown hashes are cached too: a freshly minted key has a hash nobody could have
 * looked up before, so a negative entry never hides it.
 */
export class AuthCache extends LoadingCache<KeyRecord | null> {
  private readonly evictions: EvictionChannel;

  constructor(load: (hash: string) => Promise<KeyRecord | null>, clock: Clock, opts: AuthCacheOptions = {}) {
    super(load, clock, { ttlMs: opts.ttlMs ?? AUTH_CACHE_TTL_MS, maxEntries: 50_000 });
    this.evictions = new EvictionChannel({
      shared: opts.shared,
      channel: KEYS_CHANGED_CHANNEL,
      evictLocal: (hash) => this.invalidate(hash),
      evictAll: () => this.clear(),
    });
  }

  /** Forgets keys that changed, here and on every replica sharing Redis. */
  evict(hashes: readonly string[]): Promise<void> {
    return this.evictions.evict(hashes);
  }

  close(): void {
    this.evictions.close();
  }
}
