import type { Queryable } from "@router/db";
import type { Logger } from "@router/logging";
import { GroupCommit } from "../holds/group-commit";
import { takeOpenTurn, takeOpenTurns, UNIQUE_VIOLATION, type OpenTurnToTake } from "./run-store";

/** A statement takes at most this many turns; more wait for the next one. */
const MAX_BATCH = 100;

/**
 * The leased turns of open runs (a turn's common case: one statement, no transaction), taken by
 * group commit. An idle ledger takes a turn at once, alone (`takeOpenTurn`); the turns that arrive
 * while a statement of turns is in flight go together in the next one (`takeOpenTurns`): one round
 * trip, one start of the executor and one commit for all of them. A busy ledger thus spends less
 * on each turn the more turns wait, where a statement each would queue on the pool's connections.
 *
 * Each answer is the one `takeOpenTurn` would give for that turn alone: a run's turns go in arrival
 * order, one a statement, and a turn that another writer inserted meanwhile fails its statement,
 * whose turns are then taken one by one. Those statements skip a run another writer holds locked
 * (one run must not hold up every other's turns); a turn they did not take is tried once more on
 * its own, off the line, waiting for its run. Most are such turns: a batch's settlement holds its
 * runs locked for a few milliseconds. A turn refused for good costs that one statement more.
 */
export class OpenTurns {
  private readonly queue: GroupCommit<OpenTurnToTake, boolean>;

  constructor(private readonly deps: { db: Queryable; log: Logger }) {
    this.queue = new GroupCommit({ apply: (turns) => this.takeAll(turns), maxBatch: MAX_BATCH, intervalMs: 0, log: deps.log, name: "open_turns" });
  }

  /** Whether the turn was taken; false when its run or lease does not allow it (the caller decides again). */
  async take(turn: OpenTurnToTake): Promise<boolean> {
    return (await this.queue.push(turn)) || takeOpenTurn(this.deps.db, turn, { skipLocked: false });
  }

  private async takeAll(turns: OpenTurnToTake[]): Promise<boolean[]> {
    const taken: boolean[] = [];
    let rest = turns.map((_, i) => i);
    while (rest.length > 0) {
      // A run, or a request sent twice, once a statement: the rest go in the next, in order.
      const runs = new Set<string>();
      const requests = new Set<string>();
      const now: number[] = [];
      const later: number[] = [];
      for (const i of rest) {
        const t = turns[i]!;
        if (runs.has(t.runId) || requests.has(t.requestId)) {
          later.push(i);
        } else {
          runs.add(t.runId);
          requests.add(t.requestId);
          now.push(i);
        }
      }
      const answers = await this.takeTogether(now.map((i) => turns[i]!));
      now.forEach((i, k) => (taken[i] = answers[k]!));
      rest = later;
    }
    return taken;
  }

  private async takeTogether(turns: OpenTurnToTake[]): Promise<boolean[]> {
    if (turns.length > 1) {
      try {
        const taken = await takeOpenTurns(this.deps.db, turns);
        return turns.map((t) => taken.has(t.requestId));
      } catch (err) {
        // Another writer made one of these requests a turn meanwhile: nothing was kept, each goes alone.
        if ((err as { code?: string }).code !== UNIQUE_VIOLATION) throw err;
      }
    }
    const answers: boolean[] = [];
    for (const t of turns) answers.push(await takeOpenTurn(this.deps.db, t, { skipLocked: true }));
    return answers;
  }
}
