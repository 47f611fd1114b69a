import { basisPointsOf, type Nanodollars } from "@router/money";

/**
 * The operator's fee schedule (`LEDGER_FEE_BPS`, `LEDGER_FEE_MIN`, `LEDGER_MIN_PURCHASE`). Every
 * request is BYOK: the organisation pays the provider on its own key, and what Router charges from
 * credits is its fee on each request, `feeBps` of the request's list cost. A purchase pays the same
 * rate on its amount (at least `feeMin`), kept back from what is credited.
 */
export interface FeeSchedule {
  /** Basis points of a request's list cost (and of a purchase's amount); 0 charges nothing. */
  feeBps: number;
  /** The least fee of a purchase. */
  feeMin: Nanodollars;
  /** The smallest purchase checkout accepts. */
  minPurchase: Nanodollars;
}

/** What credits cost and whether they can be bought. */
export interface CreditPolicy extends FeeSchedule {
  /** Whether a purchased balance could be spent on anything: a fee is charged and a processor takes payments. */
  purchasable: boolean;
}

/** No fee: every request is free of Router's charge, so credits could pay for nothing (the default). */
export const NO_FEE: FeeSchedule = { feeBps: 0, feeMin: 0n, minPurchase: 5_000_000_000n };

/** The policy of `schedule` with or without a payment processor configured. */
export function creditPolicy(schedule: FeeSchedule, processorConfigured: boolean): CreditPolicy {
  return { ...schedule, purchasable: schedule.feeBps > 0 && processorConfigured };
}

/** Whether requests are charged a fee from credits: then each takes part in the balance. */
export function chargesRequests(policy: FeeSchedule): boolean {
  return policy.feeBps > 0;
}

/** Router's fee on a request of list cost `listCost`, rounded up to a whole nanodollar as every cost is. */
export function requestFee(policy: FeeSchedule, listCost: Nanodollars): Nanodollars {
  // The gateway reports the same figure as the request's billed cost (its record's `fee`).
  return basisPointsOf(listCost, policy.feeBps);
}

/** The fee on a purchase of `gross` under `policy`: the percentage, at least the minimum, never more than `gross`. */
export function purchaseFee(policy: FeeSchedule, gross: Nanodollars): Nanodollars {
  const percentage = basisPointsOf(gross, policy.feeBps);
  const fee = percentage > policy.feeMin ? percentage : policy.feeMin;
  return fee > gross ? gross : fee;
}
