import { z } from "zod";
import type { Db } from "@router/db";
import { parseInput } from "@router/http-kit";
import type { Logger } from "@router/logging";
import type { Clock, Nanodollars } from "@router/money";
import { purchaseFee, type CreditPolicy } from "./credit-policy";
import { creditPaidSession, recordUnpaidSession, type CheckoutSession } from "./credit-store";
import { NANOS_PER_CENT, type ProcessorEvent } from "./payment-processor";

export interface ProcessorEventDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  policy: CreditPolicy;
}


/**
 * The checkout session fields a purchase is made of. A session is ours when checkout made it:
 * `client_reference_id` names the organisation, `metadata.fee_nanodollars` the fee it quoted.
 */
const checkoutSession = z.looseObject({
  id: z.string().min(1).max(255),
  client_reference_id: z.string().regex(/^org_[0-9A-Za-z]{1,64}$/, "expected the organisation id checkout set (org_...)"),
  currency: z.literal("usd"),
  amount_total: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  payment_status: z.enum(["paid", "unpaid", "no_payment_required"]),
  metadata: z.looseObject({ fee_nanodollars: z.string().regex(/^\d{1,18}$/, "expected integer nanodollars").optional() }).nullish(),
  customer_details: z
    .looseObject({ address: z.looseObject({ country: z.string().nullish(), state: z.string().nullish() }).nullish() })
    .nullish(),
});
type SessionFields = z.infer<typeof checkoutSession>;

/** The events that may credit a balance, and the one that reports a failed delayed payment. */
const CREDITING = new Set(["checkout.session.completed", "checkout.session.async_payment_succeeded"]);
const ASYNC_FAILED = "checkout.session.async_payment_failed";

/**
 * Applies one verified processor event. A completed or async-succeeded session whose
 * `payment_status` is `paid` credits its net amount once per session; a completed one still unpaid
 * is recorded as pending; a failed delayed payment is logged and recorded as failed; every other
 * event is acknowledged and changes nothing. A crediting event whose session lacks a field a
 * purchase needs is a 400 naming it (`data.object.<field>`).
 */
export async function applyProcessorEvent(event: ProcessorEvent, provider: string, deps: ProcessorEventDeps): Promise<void> {
  const { log } = deps;
  if (!CREDITING.has(event.type) && event.type !== ASYNC_FAILED) {
    log.debug({ eventId: event.id, type: event.type }, "ledger.credits.event_ignored");
    return;
  }
  const fields = parseInput(checkoutSession, event.object, "data.object");
  const session = purchaseOf(fields, event.id, provider, deps.policy);
  const now = deps.clock.now();
  const at = { eventId: event.id, type: event.type, sessionId: session.sessionId, orgId: session.orgId };
  if (event.type === ASYNC_FAILED) {
    await recordUnpaidSession(deps.db, session, "failed", now);
    log.warn(at, "ledger.credits.async_payment_failed");
    return;
  }
  if (fields.payment_status !== "paid") {
    if (fields.payment_status === "unpaid") await recordUnpaidSession(deps.db, session, "pending", now);
    log.info({ ...at, paymentStatus: fields.payment_status }, "ledger.credits.session_not_paid");
    return;
  }
  const purchase = await creditPaidSession(deps.db, session, now);
  if (purchase) {
    log.info({ ...at, purchaseId: purchase.id, net: purchase.net.toString() }, "ledger.credits.credited");
  } else {
    log.info(at, "ledger.credits.already_credited");
  }
}

function purchaseOf(s: SessionFields, eventId: string, provider: string, policy: CreditPolicy): CheckoutSession {
  const gross: Nanodollars = BigInt(s.amount_total) * NANOS_PER_CENT;
  // The fee checkout quoted when it made the session; the schedule's when it quoted none.
  const quoted = s.metadata?.fee_nanodollars;
  const fee = quoted === undefined ? purchaseFee(policy, gross) : BigInt(quoted) > gross ? gross : BigInt(quoted);
  return {
    provider,
    sessionId: s.id,
    eventId,
    orgId: s.client_reference_id,
    gross,
    fee,
    taxJurisdiction: jurisdictionOf(s),
  };
}

/** "US-CA" for a US state, "DE" for a country, null when the customer gave no address. */
function jurisdictionOf(s: SessionFields): string | null {
  const address = s.customer_details?.address;
  const country = address?.country?.trim().toUpperCase();
  if (!country) return null;
  const state = address?.state?.trim().toUpperCase();
  return state ? `${country}-${state}` : country;
}
