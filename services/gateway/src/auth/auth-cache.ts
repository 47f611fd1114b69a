import type { Clock } from "@router/money";
import type { StoredKey } from "../keys/key-store";
import { LoadingCache } from "@router/loading-cache";

/** The spec's bound: no instance serves a key's state older than this. */
export const AUTH_CACHE_TTL_MS = 10_000;

/**
 * Key lookups by hash. The instance that changes a key invalidates its entry at once; other
 * instances see the change when their entry expires. Unknown hashes are cached too: a freshly
 * minted key has a hash nobody could have looked up before, so a negative entry never hides it.
 */
export class AuthCache extends LoadingCache<StoredKey | null> {
  constructor(load: (hash: string) => Promise<StoredKey | null>, clock: Clock, opts: { ttlMs?: number } = {}) {
    super(load, clock, { ttlMs: opts.ttlMs ?? AUTH_CACHE_TTL_MS, maxEntries: 50_000 });
  }
}
