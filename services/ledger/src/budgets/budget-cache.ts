import type { Db } from "@router/db";
import { DEFAULT_STATE_REFRESH_MS, OrganisationStateCache } from "@router/loading-cache";
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

export const DEFAULT_BUDGET_REFRESH_MS = DEFAULT_STATE_REFRESH_MS;

/**
 * Each organisation's budgets in memory, as ceilings indexed for admission, so an Admit does not
 * read them from the database: an organisation is read on its first Admit, then served from memory
 * and read again in the background at most every `refreshMs` (which is how a write on another
 * replica arrives). A write in this process invalidates its entry at once. An organisation without
 * budgets is remembered too, so its admissions cost nothing extra.
 */
export class BudgetCache {
  private readonly cache: OrganisationStateCache<BudgetCeilings>;

  constructor(opts: BudgetCacheOptions) {
    this.cache = new OrganisationStateCache({
      ...opts,
      load: async (orgId) => new BudgetCeilings(orgId, await loadOrgBudgets(opts.db, orgId)),
      loadFailedEvent: "ledger.budgets.load_failed",
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
  close(): Promise<void> {
    return this.cache.close();
  }
}
