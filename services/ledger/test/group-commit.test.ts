import { createLogger } from "@router/logging";
import { GroupCommit } from "../src/holds/group-commit";

const log = createLogger({ level: "silent" });

/** A promise the test resolves when it chooses. */
function gate(): { opened: Promise<void>; open(): void } {
  let open = () => undefined as void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** Applies batches of numbers by doubling them, recording each batch; the first waits on `first`. */
function doubling(opts: { first?: Promise<void>; intervalMs?: number; maxBatch?: number; failWith?: number; now?: () => number } = {}) {
  const now = opts.now ?? (() => 0);
  const batches: number[][] = [];
  const started: number[] = [];
  const queue = new GroupCommit<number, number>({
    apply: async (items) => {
      batches.push(items);
      started.push(now());
      if (batches.length === 1) await opts.first;
      if (opts.failWith !== undefined && items.includes(opts.failWith)) throw new Error(`cannot apply ${opts.failWith}`);
      return items.map((n) => 2 * n);
    },
    maxBatch: opts.maxBatch ?? 100,
    intervalMs: opts.intervalMs ?? 0,
    log,
    name: "test",
    now: opts.now,
  });
  return { queue, batches, started };
}

describe("group commit", () => {
  it("applies an item at once when the queue is idle", async () => {
    const { queue, batches } = doubling();
    expect(await queue.push(21)).toBe(42);
    expect(batches).toEqual([[21]]);
  });

  it("applies the items pushed in one go in one batch, in order", async () => {
    const { queue, batches } = doubling();

    expect(await Promise.all([queue.push(1), queue.push(2), queue.push(3)])).toEqual([2, 4, 6]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it("applies the items that arrive while a batch runs together in the next batch, in order", async () => {
    const first = gate();
    const { queue, batches } = doubling({ first: first.opened });

    const answers = [queue.push(1)];
    await Promise.resolve();
    answers.push(queue.push(2), queue.push(3), queue.push(4));
    first.open();

    expect(await Promise.all(answers)).toEqual([2, 4, 6, 8]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it("takes at most maxBatch items into one batch", async () => {
    const first = gate();
    const { queue, batches } = doubling({ first: first.opened, maxBatch: 2 });

    const answers = [1, 2, 3, 4, 5].map((n) => queue.push(n));
    first.open();
    await Promise.all(answers);

    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it("applies a failed batch again item by item, so only the item that cannot be applied fails", async () => {
    const first = gate();
    const { queue, batches } = doubling({ first: first.opened, failWith: 3 });

    const answers = [queue.push(1)];
    await Promise.resolve();
    answers.push(...[2, 3, 4].map((n) => queue.push(n)));
    first.open();
    const settled = await Promise.allSettled(answers);

    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect(batches).toEqual([[1], [2, 3, 4], [2], [3], [4]]);
  });

  describe("on fake timers", () => {
    beforeEach(() => jest.useFakeTimers({ now: 1_000 }));
    afterEach(() => jest.useRealTimers());

    it("starts batches no more often than the interval", async () => {
      const { queue, started } = doubling({ intervalMs: 30, now: () => Date.now() });

      await queue.push(1);
      const second = queue.push(2);
      await jest.advanceTimersByTimeAsync(29);
      expect(started).toEqual([1_000]);

      await jest.advanceTimersByTimeAsync(1);
      expect(await second).toBe(4);
      expect(started).toEqual([1_000, 1_030]);
    });

    it("starts a full batch at once, before the interval is up", async () => {
      const { queue, started, batches } = doubling({ intervalMs: 30, maxBatch: 2, now: () => Date.now() });

      await queue.push(1);
      await Promise.all([queue.push(2), queue.push(3)]);

      expect(started).toEqual([1_000, 1_000]);
      expect(batches).toEqual([[1], [2, 3]]);
    });
  });

  it("resolves drain once every item pushed before it has been applied", async () => {
    const first = gate();
    const { queue } = doubling({ first: first.opened });
    const applied: number[] = [];
    for (const n of [1, 2, 3]) void queue.push(n).then((x) => applied.push(x));

    const drained = queue.drain();
    first.open();
    await drained;

    expect(applied.sort()).toEqual([2, 4, 6]);
    expect(queue.isIdle).toBe(true);
  });
});
