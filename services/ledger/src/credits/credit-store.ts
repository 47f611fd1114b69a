import { randomBytes } from "node:crypto";
import type { Db } from "@router/db";
import { toNanos, type Nanodollars } from "@router/money";
import { ledger } from "@router/management-api";

/** An organisation's balance; an organisation that never bought anything has all zeros. */
export interface CreditBalance {
  total: Nanodollars;
  held: Nanodollars;
  creditLine: Nanodollars;
}

/** A checkout session as the payment processor reported it, reduced to what a purchase keeps. */
export interface CheckoutSession {
  provider: string;
  sessionId: string;
  /** The processor event that reported it. */
  eventId: string;
  orgId: string;
  gross: Nanodollars;
  fee: Nanodollars;
  taxJurisdiction: string | null;
}

export type PurchaseStatus = "pending" | "paid" | "failed";

export interface Purchase {
  id: string;
  orgId: string;
  createdAt: Date;
  provider: string;
  sessionId: string;
  status: PurchaseStatus;
  gross: Nanodollars;
  fee: Nanodollars;
  net: Nanodollars;
  taxJurisdiction: string | null;
}

type BigintColumn = string | number | bigint;

interface PurchaseRow {
  id: string;
  org_id: string;
  created_at: Date | string;
  provider: string;
  session_id: string;
  status: PurchaseStatus;
  gross_nanodollars: BigintColumn;
  fee_nanodollars: BigintColumn;
  net_nanodollars: BigintColumn;
  tax_jurisdiction: string | null;
}

const PURCHASE_COLUMNS =
  "id, org_id, created_at, provider, session_id, status, gross_nanodollars, fee_nanodollars, net_nanodollars, tax_jurisdiction";

const purchaseOfRow = (r: PurchaseRow): Purchase => ({
  id: r.id,
  orgId: r.org_id,
  createdAt: new Date(r.created_at),
  provider: r.provider,
  sessionId: r.session_id,
  status: r.status,
  gross: toNanos(r.gross_nanodollars),
  fee: toNanos(r.fee_nanodollars),
  net: toNanos(r.net_nanodollars),
  taxJurisdiction: r.tax_jurisdiction,
});

export const PURCHASE_ID = ledger.PURCHASE_ID;
const newPurchaseId = (): string => `pur_${randomBytes(16).toString("base64url")}`;

export async function balanceOf(db: Db, orgId: string): Promise<CreditBalance> {
  const { rows } = await db.query<{ total_nanodollars: BigintColumn; held_nanodollars: BigintColumn; credit_line_nanodollars: BigintColumn }>(
    "SELECT total_nanodollars, held_nanodollars, credit_line_nanodollars FROM credit_balances WHERE org_id = $1",
    [orgId],
  );
  const row = rows[0];
  return {
    total: toNanos(row?.total_nanodollars),
    held: toNanos(row?.held_nanodollars),
    creditLine: toNanos(row?.credit_line_nanodollars),
  };
}

/**
 * Records a paid session and credits its net amount to the organisation's balance, in one
 * statement: only the statement that inserts the purchase as paid, or moves it to paid, adds to the
 * balance. A session already paid changes nothing, however often and however concurrently its events
 * arrive (the unique session id makes a second statement wait for the first, then find it paid).
 * Answers the purchase when this call credited it, null when it had been credited before.
 */
export async function creditPaidSession(db: Db, s: CheckoutSession, now: Date): Promise<Purchase | null> {
  const net = s.gross - s.fee;
  const { rows } = await db.query<PurchaseRow>(
    `WITH paid AS (
       INSERT INTO credit_purchases AS p (id, org_id, provider, session_id, status, gross_nanodollars, fee_nanodollars,
                                          net_nanodollars, tax_jurisdiction, last_event_id, created_at, paid_at)
       VALUES ($1, $2, $3, $4, 'paid', $5, $6, $7, $8, $9, $10, $10)
       ON CONFLICT (provider, session_id) DO UPDATE
         SET status = 'paid', gross_nanodollars = EXCLUDED.gross_nanodollars, fee_nanodollars = EXCLUDED.fee_nanodollars,
             net_nanodollars = EXCLUDED.net_nanodollars, tax_jurisdiction = EXCLUDED.tax_jurisdiction,
             last_event_id = EXCLUDED.last_event_id, paid_at = EXCLUDED.paid_at
         WHERE p.status <> 'paid' AND p.org_id = EXCLUDED.org_id
       RETURNING ${PURCHASE_COLUMNS.split(", ").map((c) => `p.${c}`).join(", ")}
     ), credited AS (
       INSERT INTO credit_balances (org_id, total_nanodollars, purchased_nanodollars, updated_at)
       SELECT org_id, net_nanodollars, net_nanodollars, $10 FROM paid
       ON CONFLICT (org_id) DO UPDATE
         SET total_nanodollars = credit_balances.total_nanodollars + EXCLUDED.total_nanodollars,
             purchased_nanodollars = credit_balances.purchased_nanodollars + EXCLUDED.purchased_nanodollars,
             updated_at = EXCLUDED.updated_at
       RETURNING org_id
     )
     SELECT ${PURCHASE_COLUMNS} FROM paid`,
    [newPurchaseId(), s.orgId, s.provider, s.sessionId, s.gross, s.fee, net, s.taxJurisdiction, s.eventId, now],
  );
  const row = rows[0];
  return row ? purchaseOfRow(row) : null;
}

/**
 * Records a session that is not paid: `pending` (completed, its payment still on its way) or
 * `failed` (that payment failed). Nothing is credited; a paid purchase is never moved back, and a
 * pending one only to failed. Answers whether a row was written.
 */
export async function recordUnpaidSession(db: Db, s: CheckoutSession, status: "pending" | "failed", now: Date): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO credit_purchases AS p (id, org_id, provider, session_id, status, gross_nanodollars, fee_nanodollars,
                                        net_nanodollars, tax_jurisdiction, last_event_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (provider, session_id) DO UPDATE SET status = EXCLUDED.status, last_event_id = EXCLUDED.last_event_id
       WHERE p.status = 'pending' AND EXCLUDED.status = 'failed'`,
    [newPurchaseId(), s.orgId, s.provider, s.sessionId, status, s.gross, s.fee, s.gross - s.fee, s.taxJurisdiction, s.eventId, now],
  );
  return rowCount > 0;
}

/**
 * One page of an organisation's purchases, newest first, after the purchase `after` (the last one
 * of the previous page). Answers null when `after` is not one of the organisation's purchases.
 */
export async function purchasesOf(db: Db, orgId: string, limit: number, after?: string): Promise<Purchase[] | null> {
  if (after !== undefined && !(await purchaseOf(db, orgId, after))) return null;
  const { rows } = await db.query<PurchaseRow>(
    `SELECT ${PURCHASE_COLUMNS} FROM credit_purchases
      WHERE org_id = $1 AND ($3::text IS NULL OR (created_at, id) < (SELECT created_at, id FROM credit_purchases WHERE id = $3))
      ORDER BY created_at DESC, id DESC LIMIT $2`,
    [orgId, limit, after ?? null],
  );
  return rows.map(purchaseOfRow);
}

/** One of the organisation's purchases; another organisation's is none. */
export async function purchaseOf(db: Db, orgId: string, id: string): Promise<Purchase | null> {
  const { rows } = await db.query<PurchaseRow>(`SELECT ${PURCHASE_COLUMNS} FROM credit_purchases WHERE org_id = $1 AND id = $2`, [orgId, id]);
  const row = rows[0];
  return row ? purchaseOfRow(row) : null;
}
