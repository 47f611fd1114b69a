import { LoadingCache } from "@router/loading-cache";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import type { LedgerPort } from "./ledger-port";

/**
 * The ledger propagates budget changes between its replicas within this long; the gateway's copy
 * of which subjects have one is kept as fresh (refreshed ahead of expiry while in use).
 */
export const BUDGET_SUBJECTS_TTL_MS = 5_000;

interface Subjects {
  workspaceIds: ReadonlySet<string>;
  agents: ReadonlySet<string>;
}

/**
 * Which workspaces and agents of an organisation have a budget, as the ledger says (cached a few
 * seconds per organisation). A request that no key ceiling and none of these count needs no `Admit`:
 * most requests, which then cost the ledger nothing and the client no round trip.
 */
export class BudgetSubjects {
  private readonly cache: LoadingCache<Subjects>;

  constructor(ledger: Pick<LedgerPort, "budgetSubjects">, clock: Clock, private readonly log: Logger) {
    this.cache = new LoadingCache<Subjects>(
      async (orgId) => {
        const r = await ledger.budgetSubjects({ orgId });
        const subjects: Subjects = { workspaceIds: new Set(r.workspaceIds), agents: new Set(r.agents) };
        return subjects;
      },
      clock,
      { ttlMs: BUDGET_SUBJECTS_TTL_MS },
    );
  }

  /**
   * Whether a budget may count a request of this workspace naming this agent. True when the ledger
   * cannot say (it decides at `Admit`, which then fails or answers as it would have).
   */
  async mayCount(orgId: string, workspaceId: string | null, agent: string | null): Promise<boolean> {
    try {
      const s = await this.cache.get(orgId);
      return (workspaceId !== null && s.workspaceIds.has(workspaceId)) || (agent !== null && s.agents.has(agent));
    } catch (err) {
      this.log.warn({ err, orgId }, "gateway.budget_subjects.unavailable");
      return true;
    }
  }

  /** After a budget write through this gateway. */
  invalidate(orgId: string): void {
    this.cache.invalidate(orgId);
  }

  stats() {
    return this.cache.stats();
  }
}
