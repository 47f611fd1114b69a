import type { Db } from "@router/db";
import { LoadingCache } from "@router/loading-cache";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { BudgetCeilings } from "./budget-ceilings";
import { loadOrgBudgets } from "./budget-store";

export interface BudgetCacheOptions {
  db: Db;
  clock: Clock;
  log: Logger;
  /**
   * How long an organisation's budgets are served before they are read again (in the background):
   * how long a budget written on another replica takes to bind here. Default 5 s.
   */
  refreshMs?: number;
  /** Past this age an entry is no longer served: the admission waits for the read. Default 60 s. */
  maxStaleMs?: number;
  /** Organisations remembered; the least recently admitted is forgotten first. Default 100,000. */
  maxEntries?: number;
}

export const DEFAULT_BUDGET_REFRESH_MS = 5_000;
const DEFAULT_MAX_STALE_MS = 60_000;
const DEFAULT_MAX_ENTRIES = 100_000;

/**
 * Each organisation's budgets in memory, as ceilings indexed for admission, so an Admit does not
 * read them from the database: an organisation is read on its first Admit, then served from memory
 * and read again in the background at most every `refreshMs` (which is how a write on another
 * replica arrives). A write in this process invalidates its entry at once. An organisation without
 * budgets is remembered too, so its admissions cost nothing extra.
 */
export class BudgetCache {
  private readonly cache: LoadingCache<BudgetCeilings>;
  private readonly reading = new Set<Promise<unknown>>();

  constructor(private readonly opts: BudgetCacheOptions) {
    const refreshMs = opts.refreshMs ?? DEFAULT_BUDGET_REFRESH_MS;
    this.cache = new LoadingCache((orgId, previous) => this.read(orgId, previous), opts.clock, {
      ttlMs: Math.max(opts.maxStaleMs ?? DEFAULT_MAX_STALE_MS, refreshMs),
      refreshAfterMs: refreshMs,
      maxEntries: opts.maxEntries ?? DEFAULT_MAX_ENTRIES,
    });
  }

  /** The organisation's budgets; rejects only when they were never read and cannot be read now. */
  get(orgId: string): Promise<BudgetCeilings> {
    return this.cache.get(orgId);
  }

  /** After a write in this process: the next admission reads the budgets again. */
  invalidate(orgId: string): void {
    this.cache.invalidate(orgId);
  }

  /** Waits for reads in flight, so the caller may close the database. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.reading]);
  }

  private async read(orgId: string, previous: BudgetCeilings | undefined): Promise<BudgetCeilings> {
    const reading = loadOrgBudgets(this.opts.db, orgId);
    this.reading.add(reading);
    try {
      return new BudgetCeilings(orgId, await reading);
    } catch (err) {
      this.opts.log.warn({ err, orgId }, "ledger.budgets.load_failed");
      // Keep serving what we had for another period rather than reading again on every Admit.
      if (previous !== undefined) return previous;
      throw err;
    } finally {
      this.reading.delete(reading);
    }
  }
}
