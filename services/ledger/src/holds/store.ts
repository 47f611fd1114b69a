import type { Db, Queryable } from "@router/db";
import { toNanos, type Nanodollars, type WindowKind } from "@router/money";
import { counterKey, type WindowedCeiling } from "./ceilings";

export interface CounterTotals {
  settled: Nanodollars;
  reserved: Nanodollars;
}

/** One counter row a hold reserved on, and how much. */
export interface HoldLine {
  subjectKind: string;
  subjectId: string;
  window: WindowKind;
  windowStart: Date;
  amount: Nanodollars;
}

export interface NewHold {
  holdId: string;
  requestId: string;
  orgId: string;
  worstCase: Nanodollars;
  isByok: boolean;
  createdAt: Date;
  expiresAt: Date;
}

/** A request for a hold on the one counter row of `ceiling`. */
export interface OneCounterAdmission {
  hold: NewHold;
  ceiling: WindowedCeiling;
  /** Stored with the hold when the ceiling is soft and already at or past its limit. */
  warning: string;
}

export interface ExistingHold {
  holdId: string;
  orgId: string;
  limitWarning: string;
}

export type Reservation =
  /** Every ceiling took the reservation; totals per counter key are after it. */
  | { kind: "placed"; totals: Map<string, CounterTotals> }
  /** At least one hard ceiling was at or past its limit; nothing was reserved. */
  | { kind: "refused"; refusedKeys: Set<string> }
  /** The request was admitted before; its hold stands. */
  | { kind: "existing"; hold: ExistingHold };

export type Closing =
  | { to: "settled"; listCost: Nanodollars; billedCost: Nanodollars }
  /**
   * A `keep` above zero trims instead: the hold goes on reserving that much (until `expiresAt`, when
   * given) and stays open.
   */
  | { to: "released"; keep?: Nanodollars; expiresAt?: Date }
  | { to: "expired" }
  /** A request admitted from a lease spent `listCost`; recorded once per `requestId`. */
  | { to: "spent"; requestId: string; listCost: Nanodollars; billedCost: Nanodollars };

export type ClosingOutcome = "closed" | "already_closed" | "not_found";

/** One request to close a hold; `now` is when it was asked for (the hold's `closed_at`). */
export interface HoldClosing {
  holdId: string;
  closing: Closing;
  now: Date;
}

interface StoredLine {
  subject_kind: string;
  subject_id: string;
  window_kind: WindowKind;
  window_start: string;
  amount: string;
}

/** A lease to place: a hold reserving `amount`, decided once its counter rows are locked. */
export interface NewLease {
  holdId: string;
  leaseId: string;
  orgId: string;
  isByok: boolean;
  createdAt: Date;
  expiresAt: Date;
}

/** The hold already placed under a lease id (possibly an ordinary hold whose request id it is). */
export interface ExistingLease {
  holdId: string;
  orgId: string;
  isLease: boolean;
  /** The hold's current worst case: the amount leased, less what trims released. */
  amount: Nanodollars;
  expiresAt: Date;
  lines: HoldLine[];
}

export type LeaseReservation =
  /** Every counter row took `amount`. */
  | { kind: "granted"; amount: Nanodollars }
  /** The size was below what was asked for; nothing was written. */
  | { kind: "refused" }
  /** The lease id was used before; that hold stands. */
  | { kind: "existing"; lease: ExistingLease };

/**
 * Decides a lease's amount from its counter rows (totals by counter key) while they are locked;
 * undefined grants nothing.
 */
export type LeaseSizing = (totals: Map<string, CounterTotals>) => Nanodollars | undefined;

/** Thrown inside a transaction to roll it back while carrying the answer out of it. */
class RollbackWith<T> extends Error {
  constructor(readonly answer: T) {
    super("rolled back to answer");
  }
}

/** A concurrent Lease call with the same id placed its hold first. */
const LEASED_CONCURRENTLY = Symbol("leased concurrently");

/** The ledger's tables: counter rows per subject and window, and holds. */
export class HoldStore {
  constructor(private readonly db: Db) {}

  /**
   * Places a hold and reserves its worst case on every ceiling's counter row in one transaction.
   * Each row is reserved by one conditional upsert that runs while the row lock is held, so a hard
   * ceiling admits only while settled + reserved is below its limit, however many requests race.
   * `ceilings` must be in lock order with one ceiling per counter row.
   */
  async reserve(hold: NewHold, ceilings: WindowedCeiling[]): Promise<Reservation> {
    const lines: HoldLine[] = ceilings.map((c) => ({ ...c, amount: hold.worstCase }));
    try {
      return await this.db.tx(async (q) => {
        const inserted = await q.query(
          `INSERT INTO holds
             (hold_id, request_id, org_id, worst_case_nanodollars, is_byok, lines, created_at, expires_at)
           VALUES ($1, $2, $3, $4::bigint, $5, $6::jsonb, $7::timestamptz, $8::timestamptz)
           ON CONFLICT (request_id) DO NOTHING
           RETURNING hold_id`,
          [
            hold.holdId,
            hold.requestId,
            hold.orgId,
            hold.worstCase.toString(),
            hold.isByok,
            JSON.stringify(lines.map(storedLine)),
            hold.createdAt.toISOString(),
            hold.expiresAt.toISOString(),
          ],
        );
        if (inserted.rowCount === 0) {
          const existing = await findByRequest(q, hold.requestId);
          if (!existing) throw new Error(`hold for request ${hold.requestId} vanished while admitting it`);
          return { kind: "existing", hold: existing };
        }
        const totals = await reserveOnCounters(q, ceilings, hold.worstCase);
        const refusedKeys = new Set(ceilings.map(counterKey).filter((k) => !totals.has(k)));
        if (refusedKeys.size > 0) throw new RollbackWith({ kind: "refused", refusedKeys });
        return { kind: "placed", totals };
      });
    } catch (err) {
      if (err instanceof RollbackWith) return err.answer as Reservation;
      throw err;
    }
  }

  /**
   * Grants a lease in one transaction: answers the hold already placed under the lease id, if any;
   * otherwise locks every ceiling's counter row (inserting missing ones) in the order given, which
   * must be lock order, sizes the lease from the locked totals, and reserves the amount on every row
   * with the lease's hold. A lease refused by `size` writes nothing.
   */
  async lease(lease: NewLease, ceilings: WindowedCeiling[], size: LeaseSizing): Promise<LeaseReservation> {
    try {
      return await this.db.tx(async (q): Promise<LeaseReservation> => {
        const existing = await findLease(q, lease.leaseId);
        if (existing) return { kind: "existing", lease: existing };
        const amount = size(await lockCounters(q, ceilings));
        if (amount === undefined) throw new RollbackWith<LeaseReservation>({ kind: "refused" });
        await addReserved(q, ceilings, amount);
        const lines: HoldLine[] = ceilings.map((c) => ({ ...c, amount }));
        const inserted = await q.query(
          `INSERT INTO holds
             (hold_id, request_id, org_id, worst_case_nanodollars, is_byok, is_lease, lines, created_at, expires_at)
           VALUES ($1, $2, $3, $4::bigint, $5, true, $6::jsonb, $7::timestamptz, $8::timestamptz)
           ON CONFLICT (request_id) DO NOTHING`,
          [
            lease.holdId,
            lease.leaseId,
            lease.orgId,
            amount.toString(),
            lease.isByok,
            JSON.stringify(lines.map(storedLine)),
            lease.createdAt.toISOString(),
            lease.expiresAt.toISOString(),
          ],
        );
        // The reservation just made has no hold to release it, so it is undone.
        if (inserted.rowCount === 0) throw new RollbackWith(LEASED_CONCURRENTLY);
        return { kind: "granted", amount };
      });
    } catch (err) {
      if (!(err instanceof RollbackWith)) throw err;
      if (err.answer !== LEASED_CONCURRENTLY) return err.answer as LeaseReservation;
      const existing = await findLease(this.db, lease.leaseId);
      if (!existing) throw new Error(`hold for lease ${lease.leaseId} vanished while leasing it`);
      return { kind: "existing", lease: existing };
    }
  }

  /**
   * Places holds that each reserve on the same single counter row, in one autocommit call
   * (migrations/002): the row is locked for that one statement and its commit. Requests are decided
   * in order, each by the same guarded upsert as `reserve`, so later ones see the reservations of
   * earlier ones. One answer per item, in order.
   */
  async reserveEach(items: OneCounterAdmission[]): Promise<Reservation[]> {
    try {
      return await this.admitOnCounter(items);
    } catch (err) {
      if (errorCode(err) !== ADMITTED_CONCURRENTLY) throw err;
      // A concurrent Admit of one of these requests committed its hold first and the whole call
      // was undone; asked again one by one, that request finds the hold.
      const answers: Reservation[] = [];
      for (const item of items) answers.push(...(await this.admitOnCounter([item])));
      return answers;
    }
  }

  private async admitOnCounter(items: OneCounterAdmission[]): Promise<Reservation[]> {
    const [first] = items;
    if (!first) return [];
    const row = first.ceiling;
    const key = counterKey(row);
    if (items.some((i) => counterKey(i.ceiling) !== key || i.ceiling.windowStart.getTime() !== row.windowStart.getTime())) {
      throw new Error("admissions batched together must share one counter row");
    }
    const result = await this.db.query<AdmitOnCounterRow>(
      `SELECT * FROM admit_on_counter($1, $2, $3, $4::timestamptz, $5::timestamptz, $6::text[], $7::text[], $8::text[],
         $9::bigint[], $10::boolean[], $11::jsonb[], $12::bigint[], $13::boolean[], $14::text[], $15::timestamptz[],
         $16::timestamptz[])
       ORDER BY item`,
      [
        row.subjectKind,
        row.subjectId,
        row.window,
        row.windowStart.toISOString(),
        row.windowEnd ? row.windowEnd.toISOString() : null,
        items.map((i) => i.hold.holdId),
        items.map((i) => i.hold.requestId),
        items.map((i) => i.hold.orgId),
        items.map((i) => i.hold.worstCase.toString()),
        items.map((i) => i.hold.isByok),
        items.map((i) => JSON.stringify([storedLine({ ...i.ceiling, amount: i.hold.worstCase })])),
        items.map((i) => i.ceiling.limit.toString()),
        items.map((i) => i.ceiling.hard),
        items.map((i) => i.warning),
        items.map((i) => i.hold.createdAt.toISOString()),
        items.map((i) => i.hold.expiresAt.toISOString()),
      ],
      { prepare: true },
    );
    if (result.rows.length !== items.length) {
      throw new Error(`admit_on_counter answered ${result.rows.length} of ${items.length} requests`);
    }
    return result.rows.map((r): Reservation => {
      if (r.answer === "existing" && r.answer_hold_id !== null && r.answer_org_id !== null) {
        return {
          kind: "existing",
          hold: { holdId: r.answer_hold_id, orgId: r.answer_org_id, limitWarning: r.answer_warning ?? "" },
        };
      }
      if (r.answer === "refused") return { kind: "refused", refusedKeys: new Set([key]) };
      if (r.answer !== "placed" || r.counter_settled === null || r.counter_reserved === null) {
        throw new Error(`admit_on_counter answered ${r.answer}`);
      }
      const totals = { settled: toNanos(r.counter_settled), reserved: toNanos(r.counter_reserved) };
      return { kind: "placed", totals: new Map([[key, totals]]) };
    });
  }

  async recordWarning(holdId: string, warning: string): Promise<void> {
    await this.db.query("UPDATE holds SET limit_warning = $2 WHERE hold_id = $1", [holdId, warning]);
  }

  /** Settled plus reserved per counter row, without locking; rows never written read as zero. */
  async totals(ceilings: WindowedCeiling[]): Promise<Map<string, CounterTotals>> {
    const out = new Map<string, CounterTotals>();
    if (ceilings.length === 0) return out;
    const params: unknown[] = [];
    const values = valuesList(
      ceilings.map((c) => [c.subjectKind, c.subjectId, c.window, c.windowStart.toISOString()]),
      ["text", "text", "text", "timestamptz"],
      params,
    );
    const result = await this.db.query<CounterRow>(
      `SELECT sc.subject_kind, sc.subject_id, sc.window_kind, sc.settled_nanodollars, sc.reserved_nanodollars
       FROM (VALUES ${values}) AS v (subject_kind, subject_id, window_kind, window_start)
       JOIN spend_counters sc USING (subject_kind, subject_id, window_kind, window_start)`,
      params,
    );
    for (const r of result.rows) out.set(rowKey(r), rowTotals(r));
    return out;
  }

  /**
   * Applies closings to holds, the whole batch in one autocommit call (group commit;
   * migrations/004): leaving `held` takes what the hold still reserves off every counter row;
   * settling adds the actual list cost to the rows of the window the hold was admitted in; a lease
   * spend settles its cost and takes it off the lease's reservation, once per request; a trim
   * releases all but `keep`. A hold that expired can still be settled (the spend happened); every
   * other closed hold stays as it is. Closings of the same hold apply in the order given. Each
   * counter row is written once with the batch's sum.
   */
  async closeMany(closings: HoldClosing[]): Promise<ClosingOutcome[]> {
    if (closings.length === 0) return [];
    const costs = closings.map(({ closing }) => (closing.to === "settled" || closing.to === "spent" ? closing : null));
    const releases = closings.map(({ closing }) => (closing.to === "released" ? closing : null));
    const result = await this.db.query<{ item: number; outcome: ClosingOutcome }>(
      `SELECT item, outcome
       FROM close_holds($1::text[], $2::text[], $3::timestamptz[], $4::bigint[], $5::bigint[], $6::text[],
         $7::bigint[], $8::timestamptz[])
       ORDER BY item`,
      [
        closings.map((c) => c.holdId),
        closings.map((c) => c.closing.to),
        closings.map((c) => c.now.toISOString()),
        costs.map((c) => c?.listCost.toString() ?? null),
        costs.map((c) => c?.billedCost.toString() ?? null),
        closings.map(({ closing }) => (closing.to === "spent" ? closing.requestId : null)),
        releases.map((r) => r?.keep?.toString() ?? null),
        releases.map((r) => r?.expiresAt?.toISOString() ?? null),
      ],
      { prepare: true },
    );
    if (result.rows.length !== closings.length) {
      throw new Error(`close_holds answered ${result.rows.length} of ${closings.length} closings`);
    }
    return result.rows.map((r) => r.outcome);
  }

  /** Open holds whose expiry is at or before `now`, oldest first. */
  async expiredHoldIds(now: Date, limit: number): Promise<string[]> {
    const r = await this.db.query<{ hold_id: string }>(
      `SELECT hold_id FROM holds WHERE state = 'held' AND expires_at <= $1::timestamptz
       ORDER BY expires_at LIMIT $2`,
      [now.toISOString(), limit],
    );
    return r.rows.map((row) => row.hold_id);
  }
}

interface CounterRow {
  subject_kind: string;
  subject_id: string;
  window_kind: WindowKind;
  settled_nanodollars: bigint | string | number;
  reserved_nanodollars: bigint | string | number;
}

const rowKey = (r: CounterRow): string =>
  counterKey({ subjectKind: r.subject_kind, subjectId: r.subject_id, window: r.window_kind });

const rowTotals = (r: CounterRow): CounterTotals => ({
  settled: toNanos(r.settled_nanodollars),
  reserved: toNanos(r.reserved_nanodollars),
});

/**
 * One statement for every ceiling: rows are inserted or locked in the order given (lock order).
 * On an existing row the reservation is added only when the ceiling is soft or settled + reserved
 * is still below the limit, checked against the locked row; a row that refuses is left unchanged
 * and is missing from the result. A new row starts at zero usage, below any positive limit; a hard
 * limit of zero or less never gets here (the caller refuses it without asking).
 */
async function reserveOnCounters(
  q: Queryable,
  ceilings: WindowedCeiling[],
  amount: Nanodollars,
): Promise<Map<string, CounterTotals>> {
  const params: unknown[] = [];
  const values = valuesList(
    ceilings.map((c) => [
      c.subjectKind,
      c.subjectId,
      c.window,
      c.windowStart.toISOString(),
      c.windowEnd ? c.windowEnd.toISOString() : null,
      amount.toString(),
      c.limit.toString(),
      c.hard,
    ]),
    ["text", "text", "text", "timestamptz", "timestamptz", "bigint", "bigint", "boolean"],
    params,
  );
  const result = await q.query<CounterRow>(
    `INSERT INTO spend_counters AS sc
       (subject_kind, subject_id, window_kind, window_start, window_end,
        reserved_nanodollars, checked_limit_nanodollars, checked_hard)
     VALUES ${values}
     ON CONFLICT (subject_kind, subject_id, window_kind, window_start) DO UPDATE
       SET reserved_nanodollars = sc.reserved_nanodollars + EXCLUDED.reserved_nanodollars,
           checked_limit_nanodollars = EXCLUDED.checked_limit_nanodollars,
           checked_hard = EXCLUDED.checked_hard
       WHERE NOT EXCLUDED.checked_hard
          OR sc.settled_nanodollars + sc.reserved_nanodollars < EXCLUDED.checked_limit_nanodollars
     RETURNING sc.subject_kind, sc.subject_id, sc.window_kind, sc.settled_nanodollars, sc.reserved_nanodollars`,
    params,
  );
  return new Map(result.rows.map((r) => [rowKey(r), rowTotals(r)]));
}

/**
 * Inserts the counter rows that do not exist yet (nothing reserved) and locks the others, in the
 * order given, in one statement. The no-op update is what takes the lock: inserting the missing
 * rows first and locking every row afterwards would hold a new row while waiting for an earlier
 * one, out of lock order, and deadlock with an Admit on the same ceilings. The last limit and mode
 * checked are recorded as Admit does. Returns the totals under the lock.
 */
async function lockCounters(q: Queryable, ceilings: WindowedCeiling[]): Promise<Map<string, CounterTotals>> {
  const params: unknown[] = [];
  const values = valuesList(
    ceilings.map((c) => [
      c.subjectKind,
      c.subjectId,
      c.window,
      c.windowStart.toISOString(),
      c.windowEnd ? c.windowEnd.toISOString() : null,
      c.limit.toString(),
      c.hard,
    ]),
    ["text", "text", "text", "timestamptz", "timestamptz", "bigint", "boolean"],
    params,
  );
  const result = await q.query<CounterRow>(
    `INSERT INTO spend_counters AS sc
       (subject_kind, subject_id, window_kind, window_start, window_end, checked_limit_nanodollars, checked_hard)
     VALUES ${values}
     ON CONFLICT (subject_kind, subject_id, window_kind, window_start) DO UPDATE
       SET checked_limit_nanodollars = EXCLUDED.checked_limit_nanodollars,
           checked_hard = EXCLUDED.checked_hard
     RETURNING sc.subject_kind, sc.subject_id, sc.window_kind, sc.settled_nanodollars, sc.reserved_nanodollars`,
    params,
  );
  return new Map(result.rows.map((r) => [rowKey(r), rowTotals(r)]));
}

/** Adds `amount` to the reservation of counter rows this transaction has locked. */
async function addReserved(q: Queryable, ceilings: WindowedCeiling[], amount: Nanodollars): Promise<void> {
  const params: unknown[] = [amount.toString()];
  const values = valuesList(
    ceilings.map((c) => [c.subjectKind, c.subjectId, c.window, c.windowStart.toISOString()]),
    ["text", "text", "text", "timestamptz"],
    params,
  );
  await q.query(
    `UPDATE spend_counters sc
     SET reserved_nanodollars = sc.reserved_nanodollars + $1::bigint
     FROM (VALUES ${values}) AS v (subject_kind, subject_id, window_kind, window_start)
     WHERE sc.subject_kind = v.subject_kind AND sc.subject_id = v.subject_id
       AND sc.window_kind = v.window_kind AND sc.window_start = v.window_start`,
    params,
  );
}

async function findLease(q: Queryable, leaseId: string): Promise<ExistingLease | undefined> {
  const r = await q.query<{
    hold_id: string;
    org_id: string;
    is_lease: boolean;
    worst_case_nanodollars: bigint | string | number;
    expires_at: Date | string;
    lines: StoredLine[];
  }>(
    `SELECT hold_id, org_id, is_lease, worst_case_nanodollars, expires_at, lines
     FROM holds WHERE request_id = $1`,
    [leaseId],
  );
  const row = r.rows[0];
  return (
    row && {
      holdId: row.hold_id,
      orgId: row.org_id,
      isLease: row.is_lease,
      amount: toNanos(row.worst_case_nanodollars),
      expiresAt: new Date(row.expires_at),
      lines: row.lines.map(holdLine),
    }
  );
}

async function findByRequest(q: Queryable, requestId: string): Promise<ExistingHold | undefined> {
  const r = await q.query<{ hold_id: string; org_id: string; limit_warning: string }>(
    "SELECT hold_id, org_id, limit_warning FROM holds WHERE request_id = $1",
    [requestId],
  );
  const row = r.rows[0];
  return row && { holdId: row.hold_id, orgId: row.org_id, limitWarning: row.limit_warning };
}

/** `($1::text, $2::bigint), ($3::text, $4::bigint)`: placeholders for `rows`, whose values go to `params`. */
function valuesList(rows: unknown[][], casts: string[], params: unknown[]): string {
  return rows
    .map((row) => {
      const cells = row.map((value, i) => {
        params.push(value);
        return `$${params.length}::${casts[i] ?? "text"}`;
      });
      return `(${cells.join(", ")})`;
    })
    .join(", ");
}

function storedLine(l: HoldLine): StoredLine {
  return {
    subject_kind: l.subjectKind,
    subject_id: l.subjectId,
    window_kind: l.window,
    window_start: l.windowStart.toISOString(),
    amount: l.amount.toString(),
  };
}

function holdLine(l: StoredLine): HoldLine {
  return {
    subjectKind: l.subject_kind,
    subjectId: l.subject_id,
    window: l.window_kind,
    windowStart: new Date(l.window_start),
    amount: toNanos(l.amount),
  };
}

interface AdmitOnCounterRow {
  item: number;
  answer: "existing" | "refused" | "placed";
  answer_hold_id: string | null;
  answer_org_id: string | null;
  answer_warning: string | null;
  counter_settled: bigint | string | number | null;
  counter_reserved: bigint | string | number | null;
}

/** Raised by admit_on_counter when a concurrent Admit of the same request won. */
const ADMITTED_CONCURRENTLY = "LR001";

function errorCode(err: unknown): unknown {
  return typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
}
