/** How the dashboard writes money, counts and times. */

const dollars = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 2 });
const cents = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 4 });
// Below a cent: two significant digits, so $0.000083 never reads as $0.00.
const fractions = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", maximumSignificantDigits: 2 });
// Every digit the API keeps (nanodollars), for the value on hover.
const exact = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 9 });
const count = new Intl.NumberFormat("en-US");
const compactCount = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });

/**
 * An amount in USD, never `$0.00` unless it is zero: whole cents from a dollar up, up to four
 * decimals from a cent up, two significant digits below a cent ($0.000083).
 */
export function money(v: number | null | undefined): string {
  if (v === null || v === undefined) return "none";
  const abs = Math.abs(v);
  if (abs === 0) return dollars.format(0);
  if (abs >= 1) return dollars.format(v);
  if (abs >= 0.01) return cents.format(v);
  return fractions.format(v);
}

/** The amount with every digit the API keeps (to nine decimals: nanodollars), for a title on hover. */
export const exactMoney = (v: number): string => exact.format(v);
export const number = (v: number): string => count.format(v);
/** A count for an axis: 1.2K, 3M. */
export const compactNumber = (v: number): string => compactCount.format(v);
export const when = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString() : "never");

/** Change of `current` against `prior` in words ("+25% on the prior period"). */
export function change(current: number, prior: number): string {
  if (prior === 0) return current === 0 ? "no change on the prior period" : "none in the prior period";
  const pct = Math.round(((current - prior) / prior) * 100);
  return `${pct >= 0 ? "+" : ""}${pct}% on the prior period`;
}
