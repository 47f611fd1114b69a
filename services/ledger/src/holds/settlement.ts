import { notFound } from "@router/errors";
import type { Logger } from "@router/logging";
import type { Clock, Nanodollars } from "@router/money";
import type { GroupCommit } from "./group-commit";
import type { Closing, ClosingOutcome, HoldClosing, HoldStore } from "./store";

/** Settle, Release, lease spends and expiry, applied in batches (group commit) by `HoldStore.closeMany`. */
export type ClosingQueue = GroupCommit<HoldClosing, ClosingOutcome>;

export interface SettlementDeps {
  store: HoldStore;
  /** Closings go through the queue, which answers once the batch has committed. */
  closings: ClosingQueue;
  clock: Clock;
}

/**
 * Replaces a hold's reservation with the actual list cost. Settling twice changes nothing; the
 * actual may exceed the reservation (the provider reports usage after the fact).
 * An empty hold id means Admit reserved nothing (no ceiling counted the request): nothing to do.
 */
export async function settle(
  holdId: string,
  cost: { listCost: Nanodollars; billedCost: Nanodollars },
  deps: SettlementDeps,
): Promise<void> {
  if (holdId === "") return;
  const outcome = await closeHold(holdId, { to: "settled", ...cost }, deps);
  if (outcome === "not_found") throw notFound(`hold ${holdId}`);
}

/** Release and CloseHolds: a release that keeps part of a lease's reservation extends its expiry. */
export interface ReleaseDeps extends SettlementDeps {
  holdTtlMs: number;
}

/**
 * Takes a hold's reservation off its ceilings when nothing was served. Releasing twice changes
 * nothing. A `keep` above zero trims a held hold instead: it goes on reserving that much and stays open.
 */
export async function release(holdId: string, keep: Nanodollars, deps: ReleaseDeps): Promise<void> {
  if (holdId === "") return;
  const outcome = await closeHold(holdId, releasing(keep, deps), deps);
  if (outcome === "not_found") throw notFound(`hold ${holdId}`);
}

export interface Spend {
  /** The lease's hold. */
  holdId: string;
  /** The request admitted from the lease: a spend counts once per request. */
  requestId: string;
  listCost: Nanodollars;
  billedCost: Nanodollars;
}

/**
 * Records lease spends, settles and releases many holds at once (they join the same group-commit
 * batches), in that order, each list in the order given. Returns the holds that were not found
 * (for a spend: no lease by that id); each of the others is closed, or already was.
 */
export async function closeHolds(
  batch: {
    spends: Spend[];
    settlements: Array<{ holdId: string; listCost: Nanodollars; billedCost: Nanodollars }>;
    releases: Array<{ holdId: string; keep: Nanodollars }>;
  },
  deps: ReleaseDeps,
): Promise<string[]> {
  const closings: Array<[string, Closing]> = [
    ...batch.spends.map(({ holdId, ...spend }): [string, Closing] => [holdId, { to: "spent", ...spend }]),
    ...batch.settlements.map(({ holdId, ...cost }): [string, Closing] => [holdId, { to: "settled", ...cost }]),
    ...batch.releases.map(({ holdId, keep }): [string, Closing] => [holdId, releasing(keep, deps)]),
  ];
  // Pushed in this order, so the queue applies them in this order.
  const outcomes = await Promise.all(closings.map(([holdId, closing]) => closeHold(holdId, closing, deps)));
  return closings.filter((_, i) => outcomes[i] === "not_found").map(([holdId]) => holdId);
}

function releasing(keep: Nanodollars, deps: ReleaseDeps): Closing {
  if (keep <= 0n) return { to: "released" };
  // What a trim keeps is the worst case of requests still in flight, which lives as long as a hold.
  return { to: "released", keep, expiresAt: new Date(deps.clock.now().getTime() + deps.holdTtlMs) };
}

function closeHold(holdId: string, closing: Closing, deps: SettlementDeps): Promise<ClosingOutcome> {
  return deps.closings.push({ holdId, closing, now: deps.clock.now() });
}

const SWEEP_BATCH = 200;

/**
 * Releases every hold past its expiry (by the injected clock), so a gateway that crashed between
 * Admit and Settle cannot pin a ceiling. Returns how many holds it expired.
 */
export async function expireHolds(deps: SettlementDeps): Promise<number> {
  let expired = 0;
  for (;;) {
    const ids = await deps.store.expiredHoldIds(deps.clock.now(), SWEEP_BATCH);
    const now = deps.clock.now();
    // Another replica or a late Settle may close one first, or a trim extend a lease; then expiring
    // it changes nothing.
    const outcomes = await Promise.all(ids.map((holdId) => deps.closings.push({ holdId, closing: { to: "expired" }, now })));
    expired += outcomes.filter((o) => o === "closed").length;
    if (ids.length < SWEEP_BATCH) return expired;
  }
}

/** Runs `expireHolds` every `intervalMs` until stopped; one sweep at a time. */
export function startExpirySweep(
  deps: SettlementDeps & { log: Logger; intervalMs: number },
): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    running = expireHolds(deps).then(
      (n) => {
        if (n > 0) deps.log.info({ expired: n }, "ledger.holds.expired");
      },
      (err: unknown) => deps.log.error({ err }, "ledger.holds.sweep_failed"),
    );
  };
  const schedule = (): NodeJS.Timeout => {
    const t = setTimeout(() => {
      tick();
      // `running` never rejects: tick gave it a handler for both outcomes.
      void running.then(() => {
        if (!stopped) timer = schedule();
      });
    }, deps.intervalMs);
    // The sweep alone must not keep a process alive.
    t.unref();
    return t;
  };
  let timer = schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
