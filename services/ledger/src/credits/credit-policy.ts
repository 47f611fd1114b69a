import type { Nanodollars } from "@router/money";

/**
 * What credits cost and whether they can be bought. Every model is BYOK-only: a purchased balance
 * could pay for nothing, so credits are not purchasable, the fee is 0 and checkout is refused with
 * 409 (docs/decisions.md, "Credits"). The numbers are the product's, not settings.
 */
export interface CreditPolicy {
  /** Whether a purchased balance could be spent on anything. */
  purchasable: boolean;
  /** The processing fee on a purchase, in basis points of its amount. */
  feeBps: number;
  /** The least fee of a purchase. */
  feeMin: Nanodollars;
  /** The smallest purchase checkout accepts. */
  minPurchase: Nanodollars;
}

export const BYOK_ONLY_POLICY: CreditPolicy = {
  purchasable: false,
  feeBps: 0,
  feeMin: 0n,
  minPurchase: 5_000_000_000n,
};

/** The fee on a purchase of `gross` under `policy`: the percentage, at least the minimum, never more than `gross`. */
export function purchaseFee(policy: CreditPolicy, gross: Nanodollars): Nanodollars {
  // Rounded up to a whole nanodollar, as every cost is.
  const percentage = (gross * BigInt(policy.feeBps) + 9_999n) / 10_000n;
  const fee = percentage > policy.feeMin ? percentage : policy.feeMin;
  return fee > gross ? gross : fee;
}
