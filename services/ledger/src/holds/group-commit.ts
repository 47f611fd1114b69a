import { performance } from "node:perf_hooks";
import type { Logger } from "@router/logging";

export interface GroupCommitOptions<I, O> {
  /** Applies a batch in one transaction, answering one outcome per item, in order. */
  apply(items: I[]): Promise<O[]>;
  /** A batch takes at most this many items; more wait for the next one. */
  maxBatch: number;
  /**
   * Batches start at most this often (unless `maxBatch` items wait), so a busy row is locked once
   * per interval; 0 starts the next batch as soon as the previous one has committed.
   */
  intervalMs: number;
  log: Logger;
  /** Names the queue in the log line of a failed batch. */
  name: string;
  /** Called whenever the queue runs dry: nothing waits and no batch runs. */
  onIdle?: () => void;
  /** Monotonic milliseconds that the interval is measured in; default `performance.now`. */
  now?: () => number;
}

interface Waiting<I, O> {
  item: I;
  resolve(outcome: O): void;
  reject(err: unknown): void;
}

/**
 * Group commit: items wait here and are applied in batches, one batch at a time, each in one
 * transaction, so a hot row is locked and flushed once per batch instead of once per item. An idle
 * queue applies what was pushed at once (everything pushed in the same synchronous run together);
 * under load the items that arrive while a batch runs make up the next one. Each caller is answered
 * once its batch has committed, so an answered item is never lost.
 *
 * A batch that fails is applied again one item at a time, so an item that cannot be applied (or
 * that raced another writer) fails alone.
 */
export class GroupCommit<I, O> {
  private waiting: Array<Waiting<I, O>> = [];
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastStartMs = Number.NEGATIVE_INFINITY;
  private idle: Array<() => void> = [];
  private lookSoon = false;
  private readonly now: () => number;

  constructor(private readonly opts: GroupCommitOptions<I, O>) {
    this.now = opts.now ?? (() => performance.now());
  }

  push(item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      // Items pushed in one go (a consumer's batch of events, a lease's closings) make one batch:
      // the queue looks at them once the pushing code has finished, not at the first of them.
      if (!this.lookSoon) {
        this.lookSoon = true;
        void Promise.resolve().then(() => {
          this.lookSoon = false;
          this.schedule();
        });
      }
    });
  }

  /** Whether nothing waits or runs. */
  get isIdle(): boolean {
    return !this.running && this.waiting.length === 0;
  }

  /** Resolves once every item pushed so far has been applied (or has failed). */
  drain(): Promise<void> {
    if (this.isIdle) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private schedule(): void {
    if (this.running) return;
    if (this.waiting.length === 0) {
      for (const resolve of this.idle.splice(0)) resolve();
      this.opts.onIdle?.();
      return;
    }
    const dueInMs = this.lastStartMs + this.opts.intervalMs - this.now();
    if (this.waiting.length >= this.opts.maxBatch || dueInMs <= 0) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      this.start();
    } else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.schedule();
      }, dueInMs);
    }
  }

  private start(): void {
    const batch = this.waiting.splice(0, this.opts.maxBatch);
    this.lastStartMs = this.now();
    this.running = this.applyBatch(batch).finally(() => {
      this.running = null;
      this.schedule();
    });
  }

  private async applyBatch(batch: Array<Waiting<I, O>>): Promise<void> {
    let outcomes: O[] | undefined;
    try {
      outcomes = await this.opts.apply(batch.map((w) => w.item));
    } catch (err) {
      if (batch.length === 1) {
        batch[0]?.reject(err);
        return;
      }
      this.opts.log.warn({ err, queue: this.opts.name, size: batch.length }, "ledger.group_commit.batch_failed");
    }
    if (outcomes) return answer(batch, outcomes);
    for (const w of batch) {
      try {
        answer([w], await this.opts.apply([w.item]));
      } catch (err) {
        w.reject(err);
      }
    }
  }
}

function answer<I, O>(batch: Array<Waiting<I, O>>, outcomes: O[]): void {
  batch.forEach((w, i) => {
    const outcome = outcomes[i];
    if (outcomes.length !== batch.length || outcome === undefined) {
      w.reject(new Error(`a batch of ${batch.length} answered ${outcomes.length} outcomes`));
    } else {
      w.resolve(outcome);
    }
  });
}
