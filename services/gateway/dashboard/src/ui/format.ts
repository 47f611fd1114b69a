/** How the dashboard writes money, counts and times. */

const usd = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 6 });
const count = new Intl.NumberFormat("en-US");

export const money = (v: number | null | undefined): string => (v === null || v === undefined ? "none" : usd.format(v));
export const number = (v: number): string => count.format(v);
export const when = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString() : "never");

/** Change of `current` against `prior` in words ("+25% on the prior period"). */
export function change(current: number, prior: number): string {
  if (prior === 0) return current === 0 ? "no change on the prior period" : "none in the prior period";
  const pct = Math.round(((current - prior) / prior) * 100);
  return `${pct >= 0 ? "+" : ""}${pct}% on the prior period`;
}
