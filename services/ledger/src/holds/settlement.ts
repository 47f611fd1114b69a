import { notFound } from "@router/errors";
import type { Logger } from "@router/logging";
import type { Clock, Nanodollars } from "@router/money";
import type { HoldStore } from "./store";

export interface SettlementDeps {
  store: HoldStore;
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
  const outcome = await deps.store.close(holdId, { to: "settled", ...cost }, deps.clock.now());
  if (outcome === "not_found") throw notFound(`hold ${holdId}`);
}

/** Takes a hold's reservation off its ceilings when nothing was served. Releasing twice changes nothing. */
export async function release(holdId: string, deps: SettlementDeps): Promise<void> {
  if (holdId === "") return;
  const outcome = await deps.store.close(holdId, { to: "released" }, deps.clock.now());
  if (outcome === "not_found") throw notFound(`hold ${holdId}`);
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
    for (const id of ids) {
      // Another replica, or a late Settle, may close it first; then this changes nothing.
      if ((await deps.store.close(id, { to: "expired" }, deps.clock.now())) === "closed") expired += 1;
    }
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
