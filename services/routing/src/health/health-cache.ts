import type { Db } from "@router/db";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { HealthSnapshot } from "./health-snapshot";
import { loadHealth, pruneHealth } from "./health-store";

export interface HealthCacheOptions {
  db: Db;
  clock: Clock;
  log: Logger;
  /** How often the snapshot is rebuilt from the store. Default 5 s. */
  refreshMs?: number;
  /** How often buckets past the 24 h window are deleted. Default 10 min. */
  pruneEveryMs?: number;
}

const DEFAULT_REFRESH_MS = 5_000;
const DEFAULT_PRUNE_EVERY_MS = 10 * 60_000;

/**
 * Holds endpoint health in memory so Plan never waits on the database. The snapshot is rebuilt
 * from the store on a timer, with windows measured on the injected clock: the store is shared by
 * every routing replica, while each replica's consumer sees only its share of the events, so
 * counting in memory alone would be wrong as soon as there are two.
 */
export class HealthCache {
  private current: HealthSnapshot;
  /** When the current snapshot was loaded (injected clock): the diagnostics report its age. */
  private loadedAt: Date;
  private refreshing: Promise<void> | null = null;
  private pruning: Promise<void> | null = null;
  private readonly timers: NodeJS.Timeout[];

  private constructor(
    private readonly opts: HealthCacheOptions,
    initial: HealthSnapshot,
  ) {
    this.current = initial;
    this.loadedAt = opts.clock.now();
    // Neither call rejects: each logs its own failure and the next tick tries again.
    this.timers = [
      setInterval(() => void this.refresh(), opts.refreshMs ?? DEFAULT_REFRESH_MS),
      setInterval(() => void this.prune(), opts.pruneEveryMs ?? DEFAULT_PRUNE_EVERY_MS),
    ];
    for (const t of this.timers) t.unref();
  }

  /** Loads health once; the cache is ready to serve when this resolves. */
  static async open(opts: HealthCacheOptions): Promise<HealthCache> {
    return new HealthCache(opts, new HealthSnapshot(await loadHealth(opts.db, opts.clock.now())));
  }

  snapshot(): HealthSnapshot {
    return this.current;
  }

  /** Milliseconds since the snapshot Plan reads was loaded; grows while refreshes fail. */
  ageMs(): number {
    return Math.max(0, this.opts.clock.now().getTime() - this.loadedAt.getTime());
  }

  /** Rebuilds the snapshot; a call while one runs joins it. A failed load keeps the last snapshot. */
  refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        const at = this.opts.clock.now();
        this.current = new HealthSnapshot(await loadHealth(this.opts.db, at));
        this.loadedAt = at;
      } catch (err) {
        this.opts.log.warn({ err }, "routing.health.refresh_failed");
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  /** Deletes what has left the 24 h window. */
  prune(): Promise<void> {
    this.pruning ??= (async () => {
      try {
        const pruned = await pruneHealth(this.opts.db, this.opts.clock.now());
        if (pruned.buckets + pruned.events > 0) this.opts.log.info(pruned, "routing.health.pruned");
      } catch (err) {
        this.opts.log.warn({ err }, "routing.health.prune_failed");
      } finally {
        this.pruning = null;
      }
    })();
    return this.pruning;
  }

  /** Stops the timers and waits for a running load or prune, so the caller may close the db. */
  async close(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    await Promise.all([this.refreshing, this.pruning]);
  }
}
