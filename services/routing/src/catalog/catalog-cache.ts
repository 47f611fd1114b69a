import type { Db } from "@router/db";
import type { LoadingCacheStats } from "@router/loading-cache";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { onCatalogImported } from "./catalog-imported";
import { CatalogSnapshot, type SnapshotOptions } from "./catalog-snapshot";
import { catalogRevision, loadCatalog } from "./catalog-store";

export interface CatalogCacheOptions extends SnapshotOptions {
  db: Db;
  clock: Clock;
  log: Logger;
  /** How long a snapshot is served before the store's revision is checked again. */
  maxAgeMs?: number;
}

const DEFAULT_MAX_AGE_MS = 30_000;

/**
 * Holds the catalog in memory so Plan and the catalog routes never wait on the database.
 * A snapshot older than `maxAgeMs` is still served while a background check compares revisions
 * (one cheap query) and reloads only when another process imported. An import in this process
 * reloads at once through the import signal.
 */
export class CatalogCache {
  private current: CatalogSnapshot;
  private checkedAt: number;
  private queue: Promise<void> = Promise.resolve();
  private pending = 0;
  private readonly unsubscribe: () => void;
  private readonly maxAgeMs: number;
  /** Snapshots served within `maxAgeMs` (hits) and past it (stale); full reads of the store (misses). */
  private readonly counters = { hits: 0, stale: 0, misses: 1, refreshes: 0 };

  private constructor(
    private readonly opts: CatalogCacheOptions,
    initial: CatalogSnapshot,
  ) {
    this.current = initial;
    this.maxAgeMs = opts.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
    this.checkedAt = opts.clock.now().getTime();
    this.unsubscribe = onCatalogImported(() => this.refresh());
  }

  /** Loads the catalog once; the cache is ready to serve when this resolves. */
  static async open(opts: CatalogCacheOptions): Promise<CatalogCache> {
    const rows = await loadCatalog(opts.db);
    return new CatalogCache(opts, new CatalogSnapshot(rows, opts));
  }

  /**
   * The current snapshot, never waiting; schedules a revision check when it has aged out (not
   * awaited: a failed check is logged and the snapshot kept).
   */
  snapshot(): CatalogSnapshot {
    if (this.opts.clock.now().getTime() - this.checkedAt >= this.maxAgeMs) {
      this.counters.stale += 1;
      if (this.pending === 0) {
        this.counters.refreshes += 1;
        void this.refresh();
      }
    } else {
      this.counters.hits += 1;
    }
    return this.current;
  }

  /** The operator diagnostics' counters; `size` is the number of models in the snapshot. */
  stats(): LoadingCacheStats {
    return { ...this.counters, size: this.current.models.length };
  }

  /** Compares revisions and reloads when the store has moved on. Calls run one after another. */
  refresh(): Promise<void> {
    this.pending += 1;
    const run = this.queue.then(() => this.check()).finally(() => {
      this.pending -= 1;
    });
    this.queue = run;
    return run;
  }

  close(): void {
    this.unsubscribe();
  }

  private async check(): Promise<void> {
    this.checkedAt = this.opts.clock.now().getTime();
    try {
      const revision = await catalogRevision(this.opts.db);
      if (revision === this.current.revision) return;
      const rows = await loadCatalog(this.opts.db);
      this.counters.misses += 1;
      this.current = new CatalogSnapshot(rows, this.opts);
      this.opts.log.info({ revision: rows.revision.toString(), models: rows.models.length }, "routing.catalog.reloaded");
    } catch (err) {
      // Keep serving the snapshot we have; the next check tries again.
      this.opts.log.warn({ err }, "routing.catalog.reload_failed");
    }
  }
}
