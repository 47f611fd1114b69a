import { randomBytes } from "node:crypto";
import type { Logger } from "@router/logging";
import type { Clock, Nanodollars } from "@router/money";
import { ledger } from "@router/proto";
import type { HoldClosings, RunningRequest } from "./hold-closings";
import type { Asked } from "./ledger-port";

export interface SpendLeasesOptions {
  /** The ledger's Lease call. */
  lease(req: Asked<ledger.LeaseRequest>): Promise<ledger.LeaseResponse>;
  /** Where lease covers, trims and releases wait for their batched CloseHolds call (which renews leases in use too). */
  closings: HoldClosings;
  clock: Clock;
  log: Logger;
  /**
   * How long one lease admits requests. Then it is trimmed to the worst case of its requests still
   * in flight and the next request takes a new one, so a lease's unspent part counts on the ceiling
   * for about this long. Default 1000 ms.
   */
  useMs?: number;
  /** A lease asks for this many times the worst case of the request that needs it. Default 64. */
  requestsPerLease?: number;
  /** A lease worth fewer of that request than this is not worth taking: Admit decides. Default 4. */
  minRequests?: number;
  /**
   * A lease with no request running that admitted nothing for this long is retired before its use
   * is over, so its unspent headroom stops counting on a budget others share (a lease in use hears
   * of a recall with its next covers; an idle one would not). Default 250 ms (at most `useMs`).
   */
  idleMs?: number;
  /** After the ledger granted no lease (little headroom left, or it failed), Admit decides for this long. Default 1000 ms. */
  retryMs?: number;
  /** Counts admissions decided here and the outcome of each Lease call. */
  onLeaseAdmission?: () => void;
  onLeaseCall?: (outcome: "granted" | "refused" | "failed") => void;
}

/**
 * The requests one lease serves: the same organisation, workspace and agent (the ledger grants a
 * lease only where none of their budgets counts), and the same ceilings (subjects, limits, windows
 * and modes).
 */
export interface LeaseScope {
  orgId: string;
  workspaceId: string;
  agent: string;
  ceilings: ledger.Ceiling[];
}

/** A request admitted from a lease; hand it back to `finish` once the request is over. */
export interface LeaseTicket {
  readonly lease: Lease;
  readonly requestId: string;
  readonly worstCase: Nanodollars;
}

interface Lease {
  holdId: string;
  amount: Nanodollars;
  /** List cost of this lease's finished requests, as known here. */
  spent: Nanodollars;
  /** Worst case of this lease's requests still running. */
  inFlight: Nanodollars;
  /**
   * Those requests, by id: sent with the lease's cover, so that if this gateway is lost the ledger
   * records each of them (charged its worst case) when the lease expires.
   */
  running: Map<string, RunningRequest>;
  /** Past this, a request that it admits also asks for the next lease: halfway through its use. */
  renewAtMs: number;
  useUntilMs: number;
  retired: boolean;
}

interface Book {
  current: Lease | null;
  asking: Promise<Lease | null> | null;
  /** Until then the ledger is not asked for a lease: Admit decides. */
  quietUntilMs: number;
  lastUsedMs: number;
}

/**
 * Spend leases: for requests whose ceilings are all hard, the gateway holds a share of the
 * ceilings' headroom (a lease, placed by the ledger like a hold) and admits requests from it
 * without a ledger call each. A request fits when its worst case fits in what the lease has left
 * after its finished requests' cost and its running requests' worst cases, so admissions from a
 * lease never take a ceiling past its limit. A lease is used for `useMs`, then trimmed to what its
 * running requests may still cost and released when the last of them finished; what each request
 * cost goes to the ledger as a spend, batched with the settlements.
 *
 * When no lease fits (a request larger than what is left, a ceiling near its limit, the ledger
 * failing), `admit` answers null and the caller asks `Admit`, which keeps refusal exact: only Admit
 * refuses, and only it can cross a limit, by at most one request.
 */
export class SpendLeases {
  private readonly books = new Map<string, Book>();
  private readonly useMs: number;
  private readonly requestsPerLease: bigint;
  private readonly minRequests: bigint;
  private readonly retryMs: number;
  private readonly idleMs: number;
  private readonly sweep: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly opts: SpendLeasesOptions) {
    this.useMs = opts.useMs ?? 1000;
    this.requestsPerLease = BigInt(opts.requestsPerLease ?? 64);
    this.minRequests = BigInt(opts.minRequests ?? 4);
    this.retryMs = opts.retryMs ?? 1000;
    this.idleMs = Math.min(opts.idleMs ?? 250, this.useMs);
    // Retires leases of subjects that went quiet, so their unspent part stops counting.
    this.sweep = setInterval(() => this.retireExpired(), Math.max(50, Math.floor(this.idleMs / 2)));
    this.sweep.unref();
    opts.closings.onRecalled((holdIds) => this.recall(holdIds));
  }

  /**
   * Whether leases can serve these key ceilings (none when only budgets count): only hard ones
   * refuse without a sentence to return.
   */
  static serves(ceilings: ledger.Ceiling[]): boolean {
    return ceilings.every((c) => c.mode !== ledger.LimitMode.LIMIT_MODE_SOFT);
  }

  /** Admits a request (its generation id) from a lease, or answers null: then `Admit` must decide. */
  async admit(scope: LeaseScope, worstCase: Nanodollars, requestId: string): Promise<LeaseTicket | null> {
    const key = scopeKey(scope);
    let book = this.books.get(key);
    if (!book) {
      book = { current: null, asking: null, quietUntilMs: 0, lastUsedMs: 0 };
      this.books.set(key, book);
    }
    const now = this.nowMs();
    book.lastUsedMs = now;
    const current = this.usable(book, now);
    if (current && fits(current, worstCase)) {
      const ticket = this.take(current, worstCase, requestId);
      // Ask for the next lease while this one still admits (half spent, or half its time gone), so
      // under steady traffic no request waits for one. Not awaited: `ask` never rejects (a failed
      // call is logged and answers null).
      if (!book.asking && (remaining(current) < current.amount / 2n || now >= current.renewAtMs)) void this.ask(book, scope, worstCase);
      return ticket;
    }
    if (now < book.quietUntilMs || this.closed) return null;
    const next = await (book.asking ?? this.ask(book, scope, worstCase));
    const lease = next && this.usable(book, this.nowMs()) === next ? next : null;
    return lease && fits(lease, worstCase) ? this.take(lease, worstCase, requestId) : null;
  }

  /**
   * Ends a request admitted from a lease. Its cost reaches the ledger with the request's record
   * (router.request.completed.v1 names the lease); here the lease counts it, so its cover stays whole
   * until the ledger has it.
   */
  finish(ticket: LeaseTicket, cost: { list: Nanodollars } | null): void {
    const { lease } = ticket;
    lease.inFlight -= ticket.worstCase;
    lease.running.delete(ticket.requestId);
    if (cost) lease.spent += cost.list;
    if (!lease.retired) this.opts.closings.cover(lease.holdId, lease.inFlight, lease.spent, lease.running);
    else if (lease.inFlight <= 0n) this.end(lease);
  }

  /**
   * Retires the leases the ledger recalled (an Admit waits for their unspent headroom of a shared
   * budget) at once rather than after their use, and asks for no lease on their books for
   * `retryMs`: Admit decides those requests meanwhile.
   */
  private recall(holdIds: string[]): void {
    const recalled = new Set(holdIds);
    const now = this.nowMs();
    for (const book of this.books.values()) {
      if (!book.current || !recalled.has(book.current.holdId)) continue;
      this.retire(book.current);
      book.current = null;
      book.quietUntilMs = now + this.retryMs;
    }
  }

  /**
   * Retires the organisation's leases at once: called after this gateway forwarded a change to its
   * budgets, so its next request is admitted on the new ones (a new lease or Admit), not on
   * headroom a lease took under the old.
   */
  forgetOrganisation(orgId: string): void {
    const prefix = `${orgId}\u0000`;
    for (const [key, book] of this.books) {
      if (!book.current || !key.startsWith(prefix)) continue;
      this.retire(book.current);
      book.current = null;
    }
  }

  /** Retires every lease (shutdown): unspent parts go back; running requests keep theirs. */
  close(): void {
    this.closed = true;
    clearInterval(this.sweep);
    for (const book of this.books.values()) {
      if (book.current) this.retire(book.current);
      book.current = null;
    }
    this.books.clear();
  }

  private take(lease: Lease, worstCase: Nanodollars, requestId: string): LeaseTicket {
    lease.inFlight += worstCase;
    lease.running.set(requestId, { worstCase, startedAtMs: this.nowMs() });
    this.opts.closings.cover(lease.holdId, lease.inFlight, lease.spent, lease.running);
    this.opts.onLeaseAdmission?.();
    return { lease, requestId, worstCase };
  }

  /** The book's current lease if it may still admit; an outlived one is retired on the way. */
  private usable(book: Book, now: number): Lease | null {
    const lease = book.current;
    if (lease && now >= lease.useUntilMs) {
      this.retire(lease);
      book.current = null;
      return null;
    }
    return lease;
  }

  private ask(book: Book, scope: LeaseScope, worstCase: Nanodollars): Promise<Lease | null> {
    const unit = worstCase > 0n ? worstCase : 1n;
    const asking = this.opts
      .lease({
        leaseId: `lease_${randomBytes(16).toString("base64url")}`,
        orgId: scope.orgId,
        workspaceId: scope.workspaceId,
        agent: scope.agent,
        ceilings: scope.ceilings,
        isByok: true,
        wantNanodollars: unit * this.requestsPerLease,
        minNanodollars: unit * this.minRequests,
      })
      .then(
        (granted): Lease | null => {
          this.opts.onLeaseCall?.(granted.granted ? "granted" : "refused");
          const now = this.nowMs();
          if (!granted.granted) {
            book.quietUntilMs = now + this.retryMs;
            return null;
          }
          const windowEndsMs = granted.windowEndsAtMs === undefined ? Infinity : Number(granted.windowEndsAtMs);
          // Never admit from a lease the ledger's sweep may release: stop halfway to its expiry.
          const safeUntilMs = now + (Number(granted.expiresAtMs) - now) / 2;
          const useUntilMs = Math.min(now + this.useMs, windowEndsMs, safeUntilMs);
          const lease: Lease = {
            holdId: granted.holdId,
            amount: granted.amountNanodollars,
            spent: 0n,
            inFlight: 0n,
            running: new Map(),
            renewAtMs: now + (useUntilMs - now) / 2,
            useUntilMs,
            retired: false,
          };
          if (book.current) this.retire(book.current);
          if (this.closed) {
            // Closed while asking: nothing will use it.
            this.retire(lease);
            return null;
          }
          book.current = lease;
          this.opts.closings.renew(lease.holdId);
          return lease;
        },
        (err: unknown) => {
          this.opts.onLeaseCall?.("failed");
          this.opts.log.warn({ err, orgId: scope.orgId }, "gateway.ledger.lease_failed");
          book.quietUntilMs = this.nowMs() + this.retryMs;
          return null;
        },
      )
      .finally(() => {
        if (book.asking === asking) book.asking = null;
      });
    book.asking = asking;
    return asking;
  }

  /** Stops admitting from a lease: it keeps only the worst case of its running requests. */
  private retire(lease: Lease): void {
    if (lease.retired) return;
    lease.retired = true;
    // A retired lease reports no more covers: the ledger keeps the last list of its running
    // requests, and ignores those whose records arrive.
    if (lease.inFlight > 0n) this.opts.closings.trim(lease.holdId, lease.inFlight, lease.spent);
    else this.end(lease);
  }

  /** Releases a retired lease whose requests have all finished. */
  private end(lease: Lease): void {
    this.opts.closings.trim(lease.holdId, 0n, lease.spent);
    this.opts.closings.done(lease.holdId);
  }

  private retireExpired(): void {
    const now = this.nowMs();
    for (const [key, book] of this.books) {
      this.usable(book, now);
      if (book.current && book.current.inFlight === 0n && now - book.lastUsedMs > this.idleMs) {
        this.retire(book.current);
        book.current = null;
      }
      const idle = !book.current && !book.asking && now >= book.quietUntilMs;
      if (idle && now - book.lastUsedMs > this.useMs) this.books.delete(key);
    }
  }

  private nowMs(): number {
    return this.opts.clock.now().getTime();
  }
}

function remaining(lease: Lease): Nanodollars {
  return lease.amount - lease.spent - lease.inFlight;
}

function fits(lease: Lease, worstCase: Nanodollars): boolean {
  return remaining(lease) >= worstCase;
}

function scopeKey(scope: LeaseScope): string {
  const ceilings = scope.ceilings.map((c) =>
    [c.subjectKind, c.subjectId, c.limitNanodollars, c.window, c.mode, c.includeByok ? 1 : 0].join("\u0001"),
  );
  return `${scope.orgId}\u0000${scope.workspaceId}\u0000${scope.agent}\u0000${ceilings.join("\u0000")}`;
}
