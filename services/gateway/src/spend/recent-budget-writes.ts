import type { Clock } from "@router/money";
import { BUDGET_SUBJECTS_TTL_MS } from "./budget-subjects";

/**
 * Organisations whose budgets this gateway changed within the ledger's refresh period (a ledger
 * replica re-reads an organisation's budgets at most that often). Until it has passed, the ledger is
 * asked to read them from its store, so a change binds on this gateway's very next request whichever
 * ledger replica answers. Empty almost always: a request pays one map lookup.
 */
export class RecentBudgetWrites {
  private readonly writtenAt = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly windowMs = BUDGET_SUBJECTS_TTL_MS,
  ) {}

  written(orgId: string): void {
    this.writtenAt.set(orgId, this.clock.now().getTime());
  }

  fresh(orgId: string): boolean {
    const at = this.writtenAt.get(orgId);
    if (at === undefined) return false;
    if (this.clock.now().getTime() - at < this.windowMs) return true;
    this.writtenAt.delete(orgId);
    return false;
  }
}
