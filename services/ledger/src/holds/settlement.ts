import type { Logger } from "@router/logging";
import type { Clock, Nanodollars } from "@router/money";
import type { RecordingOutcome, RequestUsage, TurnSettlement } from "../usage/usage-store";
import type { GroupCommit } from "./group-commit";
import type { Closing, ClosingOutcome, ExpiredHold, HoldClosing, HoldStore } from "./store";

/** Settlements, releases, lease spends and expiry, applied in batches (group commit) by `HoldStore.closeMany`. */
export type ClosingQueue = GroupCommit<HoldClosing, ClosingOutcome>;

/** Finished requests, added to usage_days in batches (group commit) by `recordRequests`. */
export type UsageQueue = GroupCommit<RequestUsage, RecordingOutcome>;

/** The request a settlement or release is about, for the record of spend per workspace and agent. */
export interface FinishedRequest {
  requestId: string;
  orgId: string;
  workspaceId: string;
  agent: string;
  isByok: boolean;
  /** Set when the request was a turn of a run: what the turn did. */
  runTurn?: RunTurnFacts;
}

/** What a turn did, beyond its cost (which its settlement carries) and whether it was served (settled or released). */
export type RunTurnFacts = Omit<TurnSettlement, "served">;

export interface SettlementDeps {
  store: HoldStore;
  /** Closings go through the queue, which answers once the batch has committed. */
  closings: ClosingQueue;
  /** So do finished requests, and with them the turns of runs among them (in the same statement). */
  usage: UsageQueue;
  clock: Clock;
}

/** Closing holds: a release that keeps part of a lease's reservation extends its expiry. */
export interface ReleaseDeps extends SettlementDeps {
  holdTtlMs: number;
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
    settlements: Array<{ holdId: string; listCost: Nanodollars; billedCost: Nanodollars; request: FinishedRequest | null }>;
    releases: Array<{ holdId: string; keep: Nanodollars; spent?: Nanodollars; request: FinishedRequest | null }>;
  },
  deps: ReleaseDeps,
): Promise<string[]> {
  const closings: Array<[string, Closing]> = [
    ...batch.spends.map(({ holdId, ...spend }): [string, Closing] => [holdId, { to: "spent", ...spend }]),
    ...batch.settlements.map(({ holdId, listCost, billedCost }): [string, Closing] => [holdId, { to: "settled", listCost, billedCost }]),
    ...batch.releases.map(({ holdId, keep, spent }): [string, Closing] => [holdId, releasing(keep, deps, spent)]),
  ].filter(([holdId]) => holdId !== "");
  const finished: Array<Promise<RecordingOutcome>> = [];
  for (const [request, cost] of [
    ...batch.settlements.map((s): [FinishedRequest | null, Nanodollars | null] => [s.request, s.listCost]),
    ...batch.releases.map((r): [FinishedRequest | null, Nanodollars | null] => [r.request, null]),
  ]) {
    if (request) finished.push(recordRequest(request, cost, deps));
  }
  // Pushed in this order, so the queue applies them in this order.
  const [outcomes] = await Promise.all([
    Promise.all(closings.map(([holdId, closing]) => closeHold(holdId, closing, deps))),
    Promise.all(finished),
  ]);
  return closings.filter((_, i) => outcomes[i] === "not_found").map(([holdId]) => holdId);
}

/**
 * A finished request's record: `cost` for a served one, null for one that served nothing. A turn of
 * a run is settled with it, in the same statement: a served turn's cost is spent, a failed turn's
 * money comes back (its turn does not).
 */
function recordRequest(request: FinishedRequest, cost: Nanodollars | null, deps: SettlementDeps): Promise<RecordingOutcome> {
  const { runTurn, ...finished } = request;
  const usage: RequestUsage = { ...finished, listCost: cost ?? 0n, at: deps.clock.now() };
  if (runTurn) usage.turn = { ...runTurn, served: cost !== null };
  return deps.usage.push(usage);
}

function releasing(keep: Nanodollars, deps: ReleaseDeps, spent?: Nanodollars): Closing {
  // A lease's final release with spends still on their way keeps those reserved (close_holds).
  if (keep <= 0n && (spent ?? 0n) <= 0n) return { to: "released" };
  // What a trim keeps is the worst case of requests still in flight, which lives as long as a hold
  // (its gateway renews it while they run).
  return { to: "released", keep, spent, expiresAt: new Date(deps.clock.now().getTime() + deps.holdTtlMs) };
}

function closeHold(holdId: string, closing: Closing, deps: SettlementDeps): Promise<ClosingOutcome> {
  return deps.closings.push({ holdId, closing, now: deps.clock.now() });
}

const SWEEP_BATCH = 200;

/**
 * Ends every hold past its expiry (by the injected clock). A live gateway renews the holds of its
 * running requests, so an expired hold's gateway is gone: its reservation is released and what it
 * covered is charged (close_holds 'expired'), and each lost request's record is published
 * (`lost`) so it shows as failed with `router.gateway_lost`: a hold's request, and each request a
 * lease's gateway last reported running whose record had not arrived. Returns how many holds it expired.
 */
export async function expireHolds(deps: SweepDeps): Promise<number> {
  let expired = 0;
  for (;;) {
    const holds = await deps.store.expiredHolds(deps.clock.now(), SWEEP_BATCH);
    const now = deps.clock.now();
    // Another replica or a late settlement may close one first, or a renewal or trim extend it; then
    // expiring it changes nothing.
    const outcomes = await Promise.all(holds.map(({ holdId }) => deps.closings.push({ holdId, closing: { to: "expired" }, now })));
    const lost = holds.filter((h, i) => outcomes[i] === "closed");
    expired += lost.length;
    if (deps.lost && lost.length > 0) {
      const holdsLost = lost.filter((h) => !h.isLease);
      const leases = new Map(lost.filter((h) => h.isLease).map((h) => [h.holdId, h]));
      const [charged, leased] = await Promise.all([
        deps.store.chargedOf(holdsLost.map((h) => h.holdId)),
        deps.store.lostLeasedRequests([...leases.keys()]),
      ]);
      const requests: LostRequest[] = holdsLost.map((h) => ({ ...h, charged: charged.get(h.holdId) ?? 0n }));
      for (const r of leased) {
        const lease = leases.get(r.holdId);
        if (lease) requests.push({ ...lease, isLease: false, requestId: r.requestId, createdAt: r.startedAt, charged: r.charged });
      }
      // A lease whose requests had all been recorded (fully spent, its records slower than its
      // release) lost nothing: no record, no warning.
      if (requests.length > 0) await deps.lost(requests, now);
    }
    if (holds.length < SWEEP_BATCH) return expired;
  }
}

/** A request whose gateway went away: its hold expired and was charged `charged` (its worst case). */
export type LostRequest = ExpiredHold & { charged: Nanodollars };

type SweepDeps = Pick<SettlementDeps, "store" | "closings" | "clock"> & {
  /** Publishes the records of lost requests; none without a bus. */
  lost?: (requests: LostRequest[], at: Date) => Promise<void>;
};

/**
 * Runs `expireHolds` every `intervalMs` until stopped, one sweep at a time, then `prune` (the
 * housekeeping of other tables) when given.
 */
export function startExpirySweep(
  deps: SweepDeps & { log: Logger; intervalMs: number; prune?: () => Promise<void> },
): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    running = expireHolds(deps)
      .then((n) => {
        if (n > 0) deps.log.info({ expired: n }, "ledger.holds.expired");
        return deps.prune?.();
      })
      .catch((err: unknown) => deps.log.error({ err }, "ledger.holds.sweep_failed"));
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
