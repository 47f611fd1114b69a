import type { Logger } from "@router/logging";
import { GroupCommit } from "./group-commit";
import { counterRowsKey, type CounterAdmission, type HoldStore, type Reservation } from "./store";

const MAX_BATCH = 100;

/**
 * Admissions grouped by the counter rows they reserve on: the requests for the same rows (one key's
 * ceiling; or a key, its workspace's and its agent's budgets) that arrive while the previous batch
 * for those rows is being committed are decided together in the next one, in arrival order. An
 * idle set of rows is admitted at once. So a hot row is locked, written and flushed once per batch
 * rather than once per request, and a burst drains in a few statements instead of queueing on the
 * row lock one commit after another.
 */
export class CounterAdmissions {
  private readonly groups = new Map<string, GroupCommit<CounterAdmission, Reservation>>();

  constructor(private readonly deps: { store: HoldStore; log: Logger }) {}

  reserve(admission: CounterAdmission): Promise<Reservation> {
    const key = counterRowsKey(admission.ceilings);
    let group = this.groups.get(key);
    if (!group) {
      const created: GroupCommit<CounterAdmission, Reservation> = new GroupCommit({
        apply: (batch) => this.deps.store.reserveEach(batch),
        maxBatch: MAX_BATCH,
        intervalMs: 0,
        log: this.deps.log,
        name: "admissions",
        onIdle: () => {
          if (this.groups.get(key) === created) this.groups.delete(key);
        },
      });
      this.groups.set(key, created);
      group = created;
    }
    return group.push(admission);
  }
}
