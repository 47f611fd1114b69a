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
  /** Carried into a threshold crossing the row's settlement causes. */
  subjectName?: string;
  workspaceId?: string;
}

export interface NewHold {
  holdId: string;
  requestId: string;
  orgId: string;
  /** The request's workspace and agent ('' for none). */
  workspaceId: string;
  agent: string;
  worstCase: Nanodollars;
  isByok: boolean;
  createdAt: Date;
  expiresAt: Date;
}

/** A request for a hold on the counter rows of `ceilings`. */
export interface CounterAdmission {
  hold: NewHold;
  /** One per counter row, in lock order. */
  ceilings: WindowedCeiling[];
  /** Per ceiling: the sentence stored with the hold when it is soft and already at or past its limit. */
  warnings: string[];
  /** Positions in `ceilings` in the order their warnings are joined (the caller's precedence). */
  warningOrder: number[];
}

export interface ExistingHold {
  holdId: string;
  orgId: string;
  limitWarning: string;
}

export type Reservation =
  /** Every ceiling took the reservation; `warning` is what was stored with the hold. */
  | { kind: "placed"; warning: string }
  /** At least one hard ceiling was at or past its limit (positions in `ceilings`); nothing was reserved. */
  | { kind: "refused"; refused: number[] }
  /** The request was admitted before; its hold stands. */
  | { kind: "existing"; hold: ExistingHold };

export type Closing =
  | { to: "settled"; listCost: Nanodollars; billedCost: Nanodollars }
  /**
   * A `keep` above zero trims instead: the hold goes on reserving that much (until `expiresAt`, when
   * given) and stays open.
   */
  | { to: "released"; keep?: Nanodollars; expiresAt?: Date; spent?: Nanodollars }
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

/** A hold line as the `lines` column keeps it. */
export interface StoredLine {
  subject_kind: string;
  subject_id: string;
  window_kind: WindowKind;
  window_start: string;
  amount: string;
  subject_name?: string;
  workspace_id?: string;
}

/** An open hold past its expiry, as the sweep finds it. */
export interface ExpiredHold {
  holdId: string;
  requestId: string;
  orgId: string;
  workspaceId: string;
  agent: string;
  isLease: boolean;
  isByok: boolean;
  createdAt: Date;
  /** The key whose ceiling the hold reserved on, and its name ('' when only budgets counted it). */
  keyHash: string;
  keyName: string;
}

/** What a lease covers as its gateway counts it. */
export interface LeaseCover {
  holdId: string;
  inFlight: Nanodollars;
  spent: Nanodollars;
  /** Its running requests (empty from a gateway of the previous release). */
  running: LeasedRequest[];
}

/** A request admitted from a lease and running on its gateway. */
export interface LeasedRequest {
  requestId: string;
  worstCase: Nanodollars;
  startedAt: Date;
}

/** A request admitted from a lease whose gateway was lost: its lease expired before its record came. */
export interface LostLeasedRequest {
  requestId: string;
  holdId: string;
  /** Its worst case. */
  charged: Nanodollars;
  startedAt: Date;
}

/** A lease to place: a hold reserving `amount`, decided once its counter rows are locked. */
export interface NewLease {
  holdId: string;
  leaseId: string;
  orgId: string;
  /** The requests' workspace and agent ('' for none): a lost request is recorded with them. */
  workspaceId: string;
  agent: string;
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

/** Leases whose lines are remembered; past this the oldest are forgotten (and read again if used). */
const KNOWN_LEASES_MAX = 10_000;

/** The ledger's tables: counter rows per subject and window, and holds. */
export class HoldStore {
  /** The lines of leases read before, by hold id: a lease's lines never change once it is granted. */
  private readonly knownLeaseLines = new Map<string, HoldLine[]>();

  constructor(private readonly db: Db) {}

  /** Remembers what a lease covers (granted here, or read from its hold), so the turns it admits need not read it. */
  rememberLeaseLines(holdId: string, lines: HoldLine[]): void {
    if (this.knownLeaseLines.has(holdId)) return;
    if (this.knownLeaseLines.size >= KNOWN_LEASES_MAX) {
      const oldest = this.knownLeaseLines.keys().next().value;
      if (oldest !== undefined) this.knownLeaseLines.delete(oldest);
    }
    this.knownLeaseLines.set(holdId, lines);
  }

  /** What a lease covers, when it was read before; whether it is still open is for the caller to check. */
  leaseLinesSeen(holdId: string): HoldLine[] | undefined {
    return this.knownLeaseLines.get(holdId);
  }

  /**
   * Grants a lease in one transaction: answers the hold already placed under the lease id, if any;
   * otherwise locks every ceiling's counter row (inserting missing ones) in the order given, which
   * must be lock order, sizes the lease from the locked totals, and reserves the amount on every row
   * with the lease's hold. A lease refused by `size` writes nothing.
   */
  async lease(lease: NewLease, ceilings: WindowedCeiling[], size: LeaseSizing): Promise<LeaseReservation> {
    try {
      let stored: StoredLine[] = [];
      const reservation = await this.db.tx(async (q): Promise<LeaseReservation> => {
        const existing = await findLease(q, lease.leaseId);
        if (existing) return { kind: "existing", lease: existing };
        const amount = size(await lockCounters(q, ceilings));
        if (amount === undefined) throw new RollbackWith<LeaseReservation>({ kind: "refused" });
        await addReserved(q, ceilings, amount);
        stored = ceilings.map((c) => storedLine({ ...c, amount }));
        const inserted = await q.query(
          `INSERT INTO holds
             (hold_id, request_id, org_id, worst_case_nanodollars, is_byok, is_lease, lines, created_at, expires_at,
              workspace_id, agent)
           VALUES ($1, $2, $3, $4::bigint, $5, true, $6::jsonb, $7::timestamptz, $8::timestamptz, $9, $10)
           ON CONFLICT (request_id) DO NOTHING`,
          [
            lease.holdId,
            lease.leaseId,
            lease.orgId,
            amount.toString(),
            lease.isByok,
            JSON.stringify(stored),
            lease.createdAt.toISOString(),
            lease.expiresAt.toISOString(),
            lease.workspaceId,
            lease.agent,
          ],
        );
        // The reservation just made has no hold to release it, so it is undone.
        if (inserted.rowCount === 0) throw new RollbackWith(LEASED_CONCURRENTLY);
        return { kind: "granted", amount };
      });
      // The lease's first turns on this replica then take one statement (takeOpenTurn), not a read first.
      if (reservation.kind === "granted") this.rememberLeaseLines(lease.holdId, stored.map(holdLine));
      return reservation;
    } catch (err) {
      if (!(err instanceof RollbackWith)) throw err;
      if (err.answer !== LEASED_CONCURRENTLY) return err.answer as LeaseReservation;
      const existing = await findLease(this.db, lease.leaseId);
      if (!existing) throw new Error(`hold for lease ${lease.leaseId} vanished while leasing it`);
      return { kind: "existing", lease: existing };
    }
  }

  /**
   * Places holds that each reserve on the same counter rows, in one autocommit call
   * (repeatable/admit_on_counters.sql): the rows are locked for that one statement and its commit.
   * Requests are decided in order against the locked totals, so later ones see the reservations
   * of earlier ones; a hard row at or past its limit refuses (nothing reserved). One answer per
   * item, in order.
   */
  async reserveEach(items: CounterAdmission[]): Promise<Reservation[]> {
    try {
      return await this.admitOnCounters(items);
    } catch (err) {
      if (errorCode(err) !== ADMITTED_CONCURRENTLY) throw err;
      // A concurrent Admit of one of these requests committed its hold first and the whole call
      // was undone; asked again one by one, that request finds the hold.
      const answers: Reservation[] = [];
      for (const item of items) answers.push(...(await this.admitOnCounters([item])));
      return answers;
    }
  }

  /**
   * Places one hold as `reserveEach` does, inside the caller's transaction (a run's turn, whose run
   * row the transaction has locked): the counter rows stay locked until it commits.
   */
  async reserveIn(q: Queryable, item: CounterAdmission): Promise<Reservation> {
    const [answer] = await this.admitOnCounters([item], q);
    if (!answer) throw new Error("admit_on_counters answered nothing");
    return answer;
  }

  private async admitOnCounters(items: CounterAdmission[], q: Queryable = this.db): Promise<Reservation[]> {
    const [first] = items;
    if (!first) return [];
    const rows = first.ceilings;
    const rowsKey = counterRowsKey(rows);
    if (items.some((i) => counterRowsKey(i.ceilings) !== rowsKey)) {
      throw new Error("admissions batched together must share their counter rows");
    }
    const perRow = <T>(f: (i: CounterAdmission, c: WindowedCeiling, j: number) => T): T[] =>
      items.flatMap((i) => i.ceilings.map((c, j) => f(i, c, j)));
    const result = await q.query<AdmitOnCountersRow>(
      `SELECT * FROM admit_on_counters($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[],
         $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::bigint[], $12::boolean[], $13::jsonb[],
         $14::timestamptz[], $15::timestamptz[], $16::bigint[], $17::boolean[], $18::text[], $19::integer[])
       ORDER BY item`,
      [
        rows.map((c) => c.subjectKind),
        rows.map((c) => c.subjectId),
        rows.map((c) => c.window),
        rows.map((c) => c.windowStart.toISOString()),
        rows.map((c) => (c.windowEnd ? c.windowEnd.toISOString() : null)),
        items.map((i) => i.hold.holdId),
        items.map((i) => i.hold.requestId),
        items.map((i) => i.hold.orgId),
        items.map((i) => i.hold.workspaceId),
        items.map((i) => i.hold.agent),
        items.map((i) => i.hold.worstCase.toString()),
        items.map((i) => i.hold.isByok),
        items.map((i) => JSON.stringify(i.ceilings.map((c) => storedLine({ ...c, amount: i.hold.worstCase })))),
        items.map((i) => i.hold.createdAt.toISOString()),
        items.map((i) => i.hold.expiresAt.toISOString()),
        perRow((_i, c) => c.limit.toString()),
        perRow((_i, c) => c.hard),
        perRow((i, _c, j) => i.warnings[j] ?? ""),
        first.warningOrder.map((j) => j + 1),
      ],
      { prepare: true },
    );
    if (result.rows.length !== items.length) {
      throw new Error(`admit_on_counters answered ${result.rows.length} of ${items.length} requests`);
    }
    return result.rows.map((r): Reservation => {
      if (r.answer === "existing" && r.answer_hold_id !== null && r.answer_org_id !== null) {
        return {
          kind: "existing",
          hold: { holdId: r.answer_hold_id, orgId: r.answer_org_id, limitWarning: r.answer_warning ?? "" },
        };
      }
      if (r.answer === "refused" && r.refused_rows) return { kind: "refused", refused: r.refused_rows.map((j) => j - 1) };
      if (r.answer !== "placed") throw new Error(`admit_on_counters answered ${r.answer}`);
      return { kind: "placed", warning: r.answer_warning ?? "" };
    });
  }

  /** The hold placed for a request, if any. */
  async holdIdOf(q: Queryable, requestId: string): Promise<string> {
    const r = await q.query<{ hold_id: string }>(`SELECT hold_id FROM holds WHERE request_id = $1`, [requestId]);
    return r.rows[0]?.hold_id ?? "";
  }

  /**
   * Settled plus reserved per counter row, without locking; rows never written read as zero. `q`: a
   * transaction's connection (the embedded store serves one session, so a transaction's reads must
   * go through it).
   */
  async totals(ceilings: WindowedCeiling[], q: Queryable = this.db): Promise<Map<string, CounterTotals>> {
    const out = new Map<string, CounterTotals>();
    if (ceilings.length === 0) return out;
    const params: unknown[] = [];
    const values = valuesList(
      ceilings.map((c) => [c.subjectKind, c.subjectId, c.window, c.windowStart.toISOString()]),
      ["text", "text", "text", "timestamptz"],
      params,
    );
    const result = await q.query<CounterRow>(
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
         $7::bigint[], $8::timestamptz[], $9::bigint[])
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
        releases.map((r) => r?.spent?.toString() ?? null),
      ],
      { prepare: true },
    );
    if (result.rows.length !== closings.length) {
      throw new Error(`close_holds answered ${result.rows.length} of ${closings.length} closings`);
    }
    return result.rows.map((r) => r.outcome);
  }

  /** Open holds whose expiry is at or before `now`, oldest first. */
  async expiredHolds(now: Date, limit: number): Promise<ExpiredHold[]> {
    const r = await this.db.query<{
      hold_id: string;
      request_id: string;
      org_id: string;
      workspace_id: string;
      agent: string;
      is_lease: boolean;
      is_byok: boolean;
      created_at: Date | string;
      key_hash: string | null;
      key_name: string | null;
    }>(
      `SELECT h.hold_id, h.request_id, h.org_id, h.workspace_id, h.agent, h.is_lease, h.is_byok, h.created_at,
              k.line->>'subject_id' AS key_hash, k.line->>'subject_name' AS key_name
       FROM holds h
       LEFT JOIN LATERAL (
         SELECT l.line FROM jsonb_array_elements(h.lines) AS l (line) WHERE l.line->>'subject_kind' = 'key' LIMIT 1
       ) AS k ON true
       WHERE h.state = 'held' AND h.expires_at <= $1::timestamptz
       ORDER BY h.expires_at LIMIT $2`,
      [now.toISOString(), limit],
    );
    return r.rows.map((row) => ({
      holdId: row.hold_id,
      requestId: row.request_id,
      orgId: row.org_id,
      workspaceId: row.workspace_id,
      agent: row.agent,
      isLease: row.is_lease,
      isByok: row.is_byok,
      createdAt: new Date(row.created_at),
      keyHash: row.key_hash ?? "",
      keyName: row.key_name ?? "",
    }));
  }

  /** What an expired hold was charged (its list cost), by hold id. */
  async chargedOf(holdIds: string[]): Promise<Map<string, Nanodollars>> {
    if (holdIds.length === 0) return new Map();
    const r = await this.db.query<{ hold_id: string; list_cost_nanodollars: string | number | bigint | null }>(
      `SELECT hold_id, list_cost_nanodollars FROM holds WHERE hold_id = ANY ($1::text[]) AND state = 'expired'`,
      [holdIds],
    );
    return new Map(r.rows.map((row) => [row.hold_id, toNanos(row.list_cost_nanodollars ?? 0)]));
  }

  /**
   * Moves the expiry of open holds (and of their runs' turns), and of the turns named by request id
   * that have no hold, to at least `until`: their gateway is alive and their requests still run.
   */
  async renew(holdIds: string[], until: Date, turnRequestIds: string[] = []): Promise<void> {
    if (holdIds.length === 0 && turnRequestIds.length === 0) return;
    await this.db.query(
      `WITH renewed AS (
         UPDATE holds SET expires_at = greatest(expires_at, $2::timestamptz)
         WHERE hold_id = ANY ($1::text[]) AND state = 'held'
         RETURNING request_id
       )
       UPDATE run_turns t SET expires_at = greatest(t.expires_at, $2::timestamptz)
       WHERE t.state = 'admitted'
         AND (t.request_id IN (SELECT request_id FROM renewed) OR t.request_id = ANY ($3::text[]))`,
      [holdIds, until.toISOString(), turnRequestIds],
    );
  }

  /**
   * Marks the open leases that reserve on any of `ceilings`' rows (in their windows) as recalled:
   * their gateways retire them on their next CloseHolds call.
   */
  async recallLeases(ceilings: WindowedCeiling[]): Promise<void> {
    if (ceilings.length === 0) return;
    await this.db.query(
      `UPDATE holds h SET recalled = true
       WHERE h.state = 'held' AND h.is_lease AND NOT h.recalled
         AND EXISTS (SELECT 1 FROM jsonb_array_elements(h.lines) AS l (line), unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS c (kind, id, win, start)
                     WHERE l.line->>'subject_kind' = c.kind AND l.line->>'subject_id' = c.id
                       AND l.line->>'window_kind' = c.win AND (l.line->>'window_start')::timestamptz = c.start::timestamptz)`,
      [
        ceilings.map((c) => c.subjectKind),
        ceilings.map((c) => c.subjectId),
        ceilings.map((c) => c.window),
        ceilings.map((c) => c.windowStart.toISOString()),
      ],
    );
  }

  /** Which of these holds are open leases recalled by a waiting Admit. */
  async recalledAmong(holdIds: string[]): Promise<string[]> {
    if (holdIds.length === 0) return [];
    const r = await this.db.query<{ hold_id: string }>(
      `SELECT hold_id FROM holds WHERE hold_id = ANY ($1::text[]) AND recalled AND state = 'held'`,
      [holdIds],
      { prepare: true },
    );
    return r.rows.map((row) => row.hold_id);
  }

  /**
   * The counter rows an open lease of `orgId` reserves on (the lines of its hold); undefined when
   * no such lease is held.
   */
  async openLeaseLines(q: Queryable, holdId: string, orgId: string): Promise<HoldLine[] | undefined> {
    const r = await q.query<{ lines: StoredLine[] }>(
      `SELECT lines FROM holds WHERE hold_id = $1 AND org_id = $2 AND is_lease AND state = 'held'`,
      [holdId, orgId],
      { prepare: true },
    );
    return r.rows[0]?.lines.map(holdLine);
  }

  /**
   * Records what open leases cover as their gateway reports it (usage reads; a lost lease's charge
   * and the records of its lost requests).
   */
  async cover(covers: LeaseCover[]): Promise<void> {
    if (covers.length === 0) return;
    await this.db.query(
      `UPDATE holds h
       SET covered_in_flight_nanodollars = c.in_flight,
           covered_spent_nanodollars = greatest(h.covered_spent_nanodollars, c.spent),
           covered_requests = c.running
       FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::jsonb[]) AS c (hold_id, in_flight, spent, running)
       WHERE h.hold_id = c.hold_id AND h.is_lease AND h.state = 'held'`,
      [
        covers.map((c) => c.holdId),
        covers.map((c) => c.inFlight.toString()),
        covers.map((c) => c.spent.toString()),
        covers.map((c) => JSON.stringify(coveredRequests(c.running))),
      ],
    );
  }

  /** The requests of these expired leases that were lost with their gateway, each charged its worst case. */
  async lostLeasedRequests(holdIds: string[]): Promise<LostLeasedRequest[]> {
    if (holdIds.length === 0) return [];
    const r = await this.db.query<{
      request_id: string;
      hold_id: string;
      list_cost_nanodollars: string | number | bigint;
      started_at_ms: string | number | null;
    }>(
      `SELECT ls.request_id, ls.hold_id, ls.list_cost_nanodollars, h.covered_requests->ls.request_id->>'started_at_ms' AS started_at_ms
       FROM lease_spends ls JOIN holds h USING (hold_id)
       WHERE ls.hold_id = ANY ($1::text[]) AND ls.lost
       ORDER BY ls.request_id`,
      [holdIds],
    );
    return r.rows.map((row) => ({
      requestId: row.request_id,
      holdId: row.hold_id,
      charged: toNanos(row.list_cost_nanodollars),
      startedAt: new Date(Number(row.started_at_ms ?? 0)),
    }));
  }

  /**
   * The unspent headroom of open leases per counter row (by counter key, for the rows of
   * `ceilings`): what each reserves beyond the worst case of its running requests and the spends on
   * their way to the ledger, as its gateway last reported them.
   */
  async leaseHeadroom(ceilings: WindowedCeiling[]): Promise<Map<string, Nanodollars>> {
    const out = new Map<string, Nanodollars>();
    if (ceilings.length === 0) return out;
    const r = await this.db.query<CounterRow & { window_start: string; headroom: string | number | bigint }>(
      `SELECT l.line->>'subject_kind' AS subject_kind, l.line->>'subject_id' AS subject_id,
              l.line->>'window_kind' AS window_kind, l.line->>'window_start' AS window_start,
              sum(greatest(greatest(h.worst_case_nanodollars - h.spent_nanodollars, 0)
                - h.covered_in_flight_nanodollars - greatest(h.covered_spent_nanodollars - h.spent_nanodollars, 0), 0)) AS headroom
       FROM holds h, jsonb_array_elements(h.lines) AS l (line)
       WHERE h.state = 'held' AND h.is_lease AND l.line->>'subject_id' = ANY ($1::text[])
       GROUP BY 1, 2, 3, 4`,
      [ceilings.map((c) => c.subjectId)],
    );
    const wanted = new Set(ceilings.map((c) => `${counterKey(c)}\u0000${c.windowStart.toISOString()}`));
    for (const row of r.rows) {
      const key = rowKey({ ...row, settled_nanodollars: 0, reserved_nanodollars: 0 });
      if (!wanted.has(`${key}\u0000${row.window_start}`)) continue;
      out.set(key, (out.get(key) ?? 0n) + toNanos(row.headroom));
    }
    return out;
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

/** A lease's running requests as `holds.covered_requests` keeps them (migrations/010_lease_requests.sql). */
function coveredRequests(running: LeasedRequest[]): Record<string, { worst_case: string; started_at_ms: number }> {
  const out: Record<string, { worst_case: string; started_at_ms: number }> = {};
  for (const r of running) out[r.requestId] = { worst_case: r.worstCase.toString(), started_at_ms: r.startedAt.getTime() };
  return out;
}

function storedLine(l: HoldLine): StoredLine {
  return {
    subject_kind: l.subjectKind,
    subject_id: l.subjectId,
    window_kind: l.window,
    window_start: l.windowStart.toISOString(),
    amount: l.amount.toString(),
    ...(l.subjectName ? { subject_name: l.subjectName } : {}),
    ...(l.workspaceId ? { workspace_id: l.workspaceId } : {}),
  };
}

export function holdLine(l: StoredLine): HoldLine {
  return {
    subjectKind: l.subject_kind,
    subjectId: l.subject_id,
    window: l.window_kind,
    windowStart: new Date(l.window_start),
    amount: toNanos(l.amount),
    subjectName: l.subject_name,
    workspaceId: l.workspace_id,
  };
}

interface AdmitOnCountersRow {
  item: number;
  answer: "existing" | "refused" | "placed";
  answer_hold_id: string | null;
  answer_org_id: string | null;
  answer_warning: string | null;
  refused_rows: number[] | null;
}

/** Identifies a set of counter rows (in the order given): admissions on the same set batch together. */
export function counterRowsKey(rows: WindowedCeiling[]): string {
  return rows.map((c) => `${counterKey(c)}\u0000${c.windowStart.getTime()}`).join("\u0001");
}

/** Raised by admit_on_counters when a concurrent Admit of the same request won. */
const ADMITTED_CONCURRENTLY = "LR001";

function errorCode(err: unknown): unknown {
  return typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
}
