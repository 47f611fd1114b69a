import { LoadingCache } from "@router/loading-cache";
import type { PresetVersion } from "./preset-merge";
import type { PresetReference } from "./preset-reference";
import { ReplicaEviction, type EvictedCacheOptions } from "../cache/replica-eviction";
import { loadPresetVersions, type PresetVersions } from "./preset-store";

/** Redis channel on which a replica that changed a preset tells the others to forget it. */
export const PRESETS_CHANGED_CHANNEL = "router:routing:presets-changed";

const DEFAULT_REFRESH_MS = 5_000;
const DEFAULT_TTL_MS = 60_000;

const keyOf = (orgId: string, slug: string) => `${orgId}\u0000${slug}`;

/**
 * Presets as Plan reads them, in memory: one entry per organisation and slug holding every
 * version, read on first use. A write in this process evicts the entry at once and publishes the
 * eviction on Redis so every other replica drops it too; a replica that missed the message (Redis
 * away) re-reads an entry in use within `refreshMs` and any entry within `ttlMs`. Presets that
 * do not exist are remembered too, so a request naming a removed preset costs no query.
 */
export class PresetCache {
  private readonly cache: LoadingCache<PresetVersions | null>;
  private readonly eviction: ReplicaEviction;

  constructor(private readonly opts: EvictedCacheOptions) {
    this.cache = new LoadingCache(
      (key, previous) => this.read(key, previous),
      opts.clock,
      { ttlMs: opts.ttlMs ?? DEFAULT_TTL_MS, refreshAfterMs: opts.refreshMs ?? DEFAULT_REFRESH_MS, maxEntries: 100_000 },
    );
    this.eviction = new ReplicaEviction(PRESETS_CHANGED_CHANNEL, (key) => this.cache.invalidate(key), opts.log, opts.redis);
  }

  /** The version a reference names (the current one unless pinned); null when it names nothing. */
  async find(orgId: string, ref: PresetReference): Promise<PresetVersion | null> {
    if (!ref.slug) return null;
    const held = await this.cache.get(keyOf(orgId, ref.slug));
    if (!held) return null;
    const version = ref.version ?? held.current;
    const settings = held.versions.get(version);
    return settings ? { slug: ref.slug, version, settings } : null;
  }

  /** Forgets the preset here and, through Redis, on every replica; called after each write. */
  async changed(orgId: string, slug: string): Promise<void> {
    await this.eviction.evict(keyOf(orgId, slug));
  }

  close(): void {
    this.eviction.close();
  }

  private async read(key: string, previous: PresetVersions | null | undefined): Promise<PresetVersions | null> {
    const [orgId = "", slug = ""] = key.split("\u0000");
    try {
      return await loadPresetVersions(this.opts.db, orgId, slug);
    } catch (err) {
      this.opts.log.warn({ err, slug }, "routing.presets.load_failed");
      if (previous !== undefined) return previous;
      throw err;
    }
  }
}
