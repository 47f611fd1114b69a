import type { Db, Queryable } from "@router/db";
import { toNanos, toUsd, type Nanodollars } from "@router/money";

type BigintColumn = string | number | bigint;

/**
 * How long a credit hold lasts before the sweep charges it as lost with its gateway. Longer than any
 * request runs (a gateway does not renew credit holds): a live request's record always settles its
 * hold first, and a hold left by a gateway that crashed ties up its fee for this long, then is charged.
 */
export const CREDIT_HOLD_TTL_MS = 30 * 60_000;

export interface CreditHoldInput {
  requestId: string;
  orgId: string;
  /** The fee on the request's worst case; 0 for a free model (checked, nothing held). */
  amount: Nanodollars;
  /** Check only: nothing is held. */
  dryRun: boolean;
  now: Date;
}

export type CreditAdmission =
  | { admitted: true; purchased: Nanodollars }
  | { admitted: false; purchased: Nanodollars; available: Nanodollars; creditLine: Nanodollars };

interface BalanceRow {
  total_nanodollars: BigintColumn;
  held_nanodollars: BigintColumn;
  credit_line_nanodollars: BigintColumn;
  purchased_nanodollars: BigintColumn;
}

/**
 * Holds a request's fee against its organisation's balance, or refuses: the balance less what
 * in-flight requests hold less this fee may not go below zero, or below minus the credit line where
 * an agreement sets one. So while the balance is negative (past its credit line) every request is
 * refused, a free model's (fee 0) included. Admitting the same request again holds nothing more.
 * An organisation without a balance row has a zero balance.
 */
export async function holdCredits(db: Db, input: CreditHoldInput): Promise<CreditAdmission> {
  if (input.dryRun || input.amount === 0n) return judged(await balanceRow(db, input.orgId), input.amount);
  return db.tx(async (q) => {
    const placed = await q.query(
      `INSERT INTO credit_holds (request_id, org_id, amount_nanodollars, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (request_id) DO NOTHING`,
      [input.requestId, input.orgId, input.amount, input.now, new Date(input.now.getTime() + CREDIT_HOLD_TTL_MS)],
    );
    // Admitted before (a retried Admit): its hold stands, nothing more is held.
    if (placed.rowCount === 0) return { admitted: true, purchased: toNanos((await balanceRow(q, input.orgId))?.purchased_nanodollars) };
    const held = await q.query<{ purchased_nanodollars: BigintColumn }>(
      `UPDATE credit_balances SET held_nanodollars = held_nanodollars + $2, updated_at = $3
        WHERE org_id = $1 AND total_nanodollars - held_nanodollars - $2 >= -credit_line_nanodollars
        RETURNING purchased_nanodollars`,
      [input.orgId, input.amount, input.now],
    );
    const row = held.rows[0];
    if (row) return { admitted: true, purchased: toNanos(row.purchased_nanodollars) };
    await q.query("DELETE FROM credit_holds WHERE request_id = $1", [input.requestId]);
    return judged(await balanceRow(q, input.orgId), input.amount);
  });
}

async function balanceRow(q: Queryable, orgId: string): Promise<BalanceRow | undefined> {
  const { rows } = await q.query<BalanceRow>(
    "SELECT total_nanodollars, held_nanodollars, credit_line_nanodollars, purchased_nanodollars FROM credit_balances WHERE org_id = $1",
    [orgId],
  );
  return rows[0];
}

function judged(row: BalanceRow | undefined, amount: Nanodollars): CreditAdmission {
  const available = toNanos(row?.total_nanodollars) - toNanos(row?.held_nanodollars);
  const creditLine = toNanos(row?.credit_line_nanodollars);
  const purchased = toNanos(row?.purchased_nanodollars);
  if (available - amount >= -creditLine) return { admitted: true, purchased };
  return { admitted: false, purchased, available, creditLine };
}

/** The refusal's sentence: what is available, and that a top-up is what lets requests through again. */
export function insufficientCreditsSentence(r: { available: Nanodollars; creditLine: Nanodollars }): string {
  const floor = r.creditLine > 0n ? `below the credit line of ${toUsd(r.creditLine)} USD` : "below zero";
  return `the credit balance cannot cover this request's fee: ${toUsd(r.available)} USD is available and a request may not take it ${floor}; buy credits to go on`;
}

/** The balance of an organisation's lifetime purchase, for request-rate tiers (0 when it never bought). */
export async function purchasedOf(db: Db, orgId: string): Promise<Nanodollars> {
  const { rows } = await db.query<{ purchased_nanodollars: BigintColumn }>(
    "SELECT purchased_nanodollars FROM credit_balances WHERE org_id = $1",
    [orgId],
  );
  return toNanos(rows[0]?.purchased_nanodollars);
}

/**
 * Charges the holds past their lifetime (their gateway never reported their requests): each is
 * charged what it held, and kept as expired so that a late record replaces the charge with its
 * actual fee. Returns how many it charged.
 */
export async function expireCreditHolds(db: Db, now: Date, limit = 500): Promise<number> {
  const { rows } = await db.query<{ n: BigintColumn }>(
    `WITH due AS (
       SELECT request_id FROM credit_holds WHERE NOT expired AND expires_at <= $1
       ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED
     ), gone AS (
       UPDATE credit_holds h SET expired = true FROM due WHERE h.request_id = due.request_id AND NOT h.expired
       RETURNING h.org_id, h.amount_nanodollars
     ), sums AS (
       SELECT org_id, sum(amount_nanodollars) AS amount FROM gone GROUP BY org_id
     ), charged AS (
       UPDATE credit_balances b
          SET held_nanodollars = b.held_nanodollars - s.amount, total_nanodollars = b.total_nanodollars - s.amount, updated_at = $1
         FROM sums s WHERE b.org_id = s.org_id
       RETURNING b.org_id
     )
     SELECT count(*) AS n FROM gone`,
    [now, limit],
  );
  return Number(rows[0]?.n ?? 0);
}

/** Forgets expired holds older than `before` (a late record comes within minutes). */
export async function pruneExpiredCreditHolds(db: Db, before: Date): Promise<void> {
  await db.query("DELETE FROM credit_holds WHERE expired AND expires_at < $1", [before]);
}

/** Gives a request's credit hold back (another limit refused it after the hold was placed). */
export async function returnCreditHold(db: Db, requestId: string, now: Date): Promise<void> {
  await db.query(
    `WITH gone AS (
       DELETE FROM credit_holds WHERE request_id = $1 AND NOT expired RETURNING org_id, amount_nanodollars
     )
     UPDATE credit_balances b SET held_nanodollars = b.held_nanodollars - g.amount_nanodollars, updated_at = $2
       FROM gone g WHERE b.org_id = g.org_id`,
    [requestId, now],
  );
}
