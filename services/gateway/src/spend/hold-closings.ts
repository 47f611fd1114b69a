import { randomBytes } from "node:crypto";
import { createTimeout } from "retry";
import { DomainError } from "@router/errors";
import type { Logger } from "@router/logging";
import type { Nanodollars } from "@router/money";
import type { ledger } from "@router/proto";

/**
 * The ledger applies a batch's spends, then its releases. Finished requests are not in it: the
 * ledger settles each from its record on the bus (router.request.completed.v1).
 */
export interface HoldClosingBatch {
  /** Always empty from this gateway; the field is for gateways of the release before durable settlement. */
  settlements: [];
  /**
   * Lease trims and releases; they name no request. `spent_nanodollars`: the lease's spends as counted
   * here, still on their way in their records.
   */
  releases: ledger.ReleaseRequest[];
  spends: Array<{ holdId: string; requestId: string; listCostNanodollars: Nanodollars; billedCostNanodollars: Nanodollars }>;
  /** Holds of requests still running here: the ledger keeps them (a hold not renewed is lost with its gateway). */
  renewHoldIds: string[];
  /** Turns of runs running here that have no hold of their own (a lease admitted them), by request id. */
  renewTurnRequestIds: string[];
  /** What this gateway's leases cover now. */
  leaseCovers: Array<{ holdId: string; inFlightNanodollars: Nanodollars; spentNanodollars: Nanodollars; running: ledger.LeasedRequest[] }>;
}

export interface HoldClosingsOptions {
  /** Sends one batch to the ledger (CloseHolds); answers the hold ids it did not know. */
  send(batch: HoldClosingBatch): Promise<{ unknownHoldIds: string[]; recalledLeaseHoldIds?: string[] }>;
  log: Logger;
  /** What finished within this long goes in one call. Default 50 ms: the ledger keeps the worst case reserved meanwhile, so waiting is safe, and fewer calls leave more CPU to requests. */
  batchMs?: number;
  /** At most this many closings per call. Default 500. */
  maxBatch?: number;
  /** Wait before sending a batch again that the ledger could not take. Default 500 ms, doubling to 10 s. */
  retryMs?: number;
  /** Closings kept while the ledger is away; past this the oldest are dropped, loudly. Default 100 000. */
  maxPending?: number;
  /**
   * How often the holds of running requests are renewed. Well under the ledger's hold TTL
   * (LEDGER_HOLD_TTL_MS, 60 s), which ends holds that are not. Default 15 000 ms.
   */
  renewMs?: number;
}

type Closing =
  | { kind: "release"; holdId: string; keepNanodollars: Nanodollars; spentNanodollars: Nanodollars }
  | { kind: "spend"; holdId: string; requestId: string; listCostNanodollars: Nanodollars; billedCostNanodollars: Nanodollars };

const MAX_RETRY_MS = 10_000;

/** A request running from a lease. */
export interface RunningRequest {
  worstCase: Nanodollars;
  startedAtMs: number;
}

interface Cover {
  inFlight: Nanodollars;
  spent: Nanodollars;
  running: ReadonlyMap<string, RunningRequest>;
}

/**
 * Lease trims, releases and spends on their way to the ledger, off the response path, with the
 * renewals of running requests' holds and what each lease covers. What finishes within
 * `batchMs` leaves in one CloseHolds call, one call at a time. A batch the ledger could not take
 * (unreachable, too slow) is kept and sent again with backoff, so a ledger restart does not lose
 * spend; until then the ledger still holds the worst case, so ceilings stay safe. A batch the
 * ledger refused outright is sent again item by item; an item it refuses alone, and holds it does
 * not know, are logged and dropped.
 */
export class HoldClosings {
  private pending: Closing[] = [];
  private sending: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private failures = 0;
  private readonly batchMs: number;
  private readonly maxBatch: number;
  private readonly retryMs: number;
  private readonly maxPending: number;
  /** Holds (and leases) of requests running here, renewed every `renewMs`. */
  private readonly running = new Set<string>();
  /** Turns running here without a hold of their own, by request id: renewed with the holds. */
  private readonly runningTurns = new Set<string>();
  private renewDue = false;
  private readonly renewal: NodeJS.Timeout;
  private readonly recallListeners: Array<(holdIds: string[]) => void> = [];
  /** The latest cover of each lease, sent with the next call. */
  private covers = new Map<string, Cover>();

  constructor(private readonly opts: HoldClosingsOptions) {
    this.batchMs = opts.batchMs ?? 50;
    this.maxBatch = opts.maxBatch ?? 500;
    this.retryMs = opts.retryMs ?? 500;
    this.maxPending = opts.maxPending ?? 100_000;
    this.renewal = setInterval(() => {
      if (this.running.size === 0 && this.runningTurns.size === 0) return;
      this.renewDue = true;
      this.schedule(0);
    }, opts.renewMs ?? 15_000);
    this.renewal.unref();
  }

  /** A hold (or lease) whose request is running here: renewed until `done`. */
  renew(holdId: string): void {
    if (holdId !== "") this.running.add(holdId);
  }

  /** Leases of this gateway the ledger wants back (an Admit waits for their unspent headroom): `listener` gets their hold ids. */
  onRecalled(listener: (holdIds: string[]) => void): void {
    this.recallListeners.push(listener);
  }

  /** A run's turn running here that has no hold of its own (a spend lease admitted it): renewed until `doneTurn`. */
  renewTurn(requestId: string): void {
    this.runningTurns.add(requestId);
  }

  /** Its request finished here and its record is on the bus (the ledger settles from it): no more renewals. */
  done(holdId: string): void {
    this.running.delete(holdId);
  }

  doneTurn(requestId: string): void {
    this.runningTurns.delete(requestId);
  }

  /**
   * What a lease covers now: its running requests' worst case, its requests' spends as counted here,
   * and its running requests (read when the call leaves, not copied per request).
   */
  cover(holdId: string, inFlight: Nanodollars, spent: Nanodollars, running: ReadonlyMap<string, RunningRequest>): void {
    this.covers.set(holdId, { inFlight, spent, running });
    this.schedule(this.failures > 0 ? this.backoffMs() : this.batchMs);
  }

  /**
   * Trims a lease to what it still covers: the worst case of its running requests (`keep`) plus
   * the spends counted here (`spent`) that have not reached the ledger yet. `keep` 0 releases it.
   */
  trim(holdId: string, keep: Nanodollars, spent: Nanodollars): void {
    this.add({ kind: "release", holdId, keepNanodollars: keep, spentNanodollars: spent });
  }

  /** Stops the renewals (shutdown, after the last flush). */
  close(): void {
    clearInterval(this.renewal);
  }

  /** Records what one request admitted from a spend lease cost; the ledger counts each request once. */
  spend(holdId: string, requestId: string, listCostNanodollars: Nanodollars, billedCostNanodollars: Nanodollars): void {
    this.add({ kind: "spend", holdId, requestId, listCostNanodollars, billedCostNanodollars });
  }

  /** Closings not yet accepted by the ledger. */
  get size(): number {
    return this.pending.length;
  }

  /** Sends everything now and resolves once the ledger took it, or after `timeoutMs` (shutdown). */
  async flush(timeoutMs: number): Promise<void> {
    const until = Date.now() + timeoutMs;
    this.clearTimer();
    while ((this.hasWork || this.sending) && Date.now() < until) {
      if (!this.sending) {
        if (this.failures > 0) await sleep(Math.min(this.backoffMs(), until - Date.now()));
        this.sendNext();
      }
      await Promise.race([this.sending, sleep(until - Date.now())]);
    }
    this.clearTimer();
    if (this.pending.length > 0) {
      this.opts.log.error({ pending: this.pending.length }, "gateway.ledger.closings_lost_on_shutdown");
    }
  }

  private add(closing: Closing): void {
    this.pending.push(closing);
    if (this.pending.length > this.maxPending) {
      const dropped = this.pending.splice(0, this.pending.length - this.maxPending);
      this.opts.log.error({ dropped: dropped.length }, "gateway.ledger.closings_dropped");
    }
    this.schedule(this.failures > 0 ? this.backoffMs() : this.batchMs);
  }

  private schedule(delayMs: number): void {
    if (this.sending || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.sendNext();
    }, delayMs);
    // Shutdown flushes explicitly; a pending send alone must not keep a process alive.
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Doubling from `retryMs`, capped, stretched by a random 0-100% so replicas do not retry in step. */
  private backoffMs(): number {
    return createTimeout(Math.max(0, this.failures - 1), { factor: 2, minTimeout: this.retryMs, maxTimeout: MAX_RETRY_MS, randomize: true });
  }

  private get hasWork(): boolean {
    return this.pending.length > 0 || this.renewDue || this.covers.size > 0;
  }

  private sendNext(): void {
    if (this.sending || !this.hasWork) return;
    const batch = mergeSpends(this.pending.splice(0, this.maxBatch));
    const renew = this.renewDue ? [...this.running] : [];
    const renewTurns = this.renewDue ? [...this.runningTurns] : [];
    const covers = this.covers;
    this.renewDue = false;
    this.covers = new Map();
    this.sending = this.send(batch, renew, covers, renewTurns).finally(() => {
      this.sending = null;
      if (this.hasWork) this.schedule(this.failures > 0 ? this.backoffMs() : this.batchMs);
    });
  }

  private async send(
    batch: Closing[],
    renew: string[] = [],
    covers: Map<string, Cover> = new Map(),
    renewTurns: string[] = [],
  ): Promise<void> {
    // Within a batch the ledger applies spends before releases, as they were queued: a lease's
    // release is queued only after the spends of the requests it no longer covers.
    const request: HoldClosingBatch = {
      settlements: [],
      releases: [],
      spends: [],
      renewHoldIds: renew,
      renewTurnRequestIds: renewTurns,
      leaseCovers: [...covers].map(([holdId, c]) => ({
        holdId,
        inFlightNanodollars: c.inFlight,
        spentNanodollars: c.spent,
        running: [...c.running].map(([requestId, r]) => ({ requestId, worstCaseNanodollars: r.worstCase, startedAtMs: BigInt(r.startedAtMs) })),
      })),
    };
    for (const c of batch) {
      switch (c.kind) {
        case "spend":
          request.spends.push({
            holdId: c.holdId,
            requestId: c.requestId,
            listCostNanodollars: c.listCostNanodollars,
            billedCostNanodollars: c.billedCostNanodollars,
          });
          break;
        case "release":
          request.releases.push({
            holdId: c.holdId,
            keepNanodollars: c.keepNanodollars,
            spentNanodollars: c.spentNanodollars,
            orgId: "",
            requestId: "",
            workspaceId: "",
            agent: "",
          });
          break;
      }
    }
    try {
      const { unknownHoldIds, recalledLeaseHoldIds = [] } = await this.opts.send(request);
      if (recalledLeaseHoldIds.length > 0) for (const listener of this.recallListeners) listener(recalledLeaseHoldIds);
      if (this.failures > 0) this.opts.log.info({ retries: this.failures }, "gateway.ledger.closings_resumed");
      this.failures = 0;
      if (unknownHoldIds.length > 0) {
        this.opts.log.error({ holdIds: unknownHoldIds }, "gateway.ledger.closing_unknown_holds");
      }
    } catch (err) {
      if (!isTransient(err)) {
        // The ledger refuses a whole call for one malformed item: one by one, only that one is lost.
        if (batch.length > 1) {
          for (const closing of batch) await this.send([closing]);
          return;
        }
        if (batch.length === 0) {
          this.opts.log.error({ err }, "gateway.ledger.renewal_refused");
          return;
        }
        this.opts.log.error({ err, holdId: batch[0]?.holdId }, "gateway.ledger.closing_refused");
        return;
      }
      this.failures += 1;
      // Back at the front, in order: the next attempt carries them first. Renewals and covers go
      // again too (a newer cover wins).
      this.pending.unshift(...batch);
      if (renew.length > 0) this.renewDue = true;
      for (const [holdId, c] of covers) if (!this.covers.has(holdId)) this.covers.set(holdId, c);
      if (this.failures === 1) this.opts.log.warn({ err, pending: this.pending.length }, "gateway.ledger.closings_retrying");
    }
  }
}

/**
 * One spend per lease per batch: the ledger writes a row per spend, and a lease serves many
 * requests. The sum gets an id of its own, made once here; a batch sent again carries the merged
 * spends, so the ledger still counts each once.
 */
function mergeSpends(batch: Closing[]): Closing[] {
  type Spend = Extract<Closing, { kind: "spend" }>;
  const sums = new Map<string, { spend: Spend; merged: boolean }>();
  const out: Closing[] = [];
  for (const c of batch) {
    if (c.kind !== "spend") {
      out.push(c);
      continue;
    }
    const sum = sums.get(c.holdId);
    if (!sum) {
      const spend = { ...c };
      sums.set(c.holdId, { spend, merged: false });
      out.push(spend);
      continue;
    }
    if (!sum.merged) sum.spend.requestId = `spends_${randomBytes(16).toString("base64url")}`;
    sum.merged = true;
    sum.spend.listCostNanodollars += c.listCostNanodollars;
    sum.spend.billedCostNanodollars += c.billedCostNanodollars;
  }
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)).unref());
}

/** The ledger was unreachable or slow (a 503 from the call): worth sending again. */
function isTransient(err: unknown): boolean {
  return err instanceof DomainError && err.status === 503;
}
