import type { Logger } from "@router/logging";
import { counterKey } from "./ceilings";
import { GroupCommit } from "./group-commit";
import type { HoldStore, OneCounterAdmission, Reservation } from "./store";

const MAX_BATCH = 100;

/**
 * Admissions that reserve on a single counter row, grouped per row: the requests for one row that
 * arrive while its previous batch is being committed are decided together in the next one, in
 * arrival order. An idle row is admitted at once. So a hot row is locked, written and flushed
 * once per batch rather than once per request, and a burst drains in a few statements instead of
 * queueing on the row lock one commit after another.
 */
export class CounterAdmissions {
  private readonly rows = new Map<string, GroupCommit<OneCounterAdmission, Reservation>>();

  constructor(private readonly deps: { store: HoldStore; log: Logger }) {}

  reserve(admission: OneCounterAdmission): Promise<Reservation> {
    const { ceiling } = admission;
    const key = `${counterKey(ceiling)}\u0000${ceiling.windowStart.getTime()}`;
    let row = this.rows.get(key);
    if (!row) {
      const created: GroupCommit<OneCounterAdmission, Reservation> = new GroupCommit({
        apply: (batch) => this.deps.store.reserveEach(batch),
        maxBatch: MAX_BATCH,
        intervalMs: 0,
        log: this.deps.log,
        name: "admissions",
        onIdle: () => {
          if (this.rows.get(key) === created) this.rows.delete(key);
        },
      });
      this.rows.set(key, created);
      row = created;
    }
    return row.push(admission);
  }
}
