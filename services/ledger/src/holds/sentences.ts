import { NANOS_PER_USD, type Nanodollars } from "@router/money";
import type { WindowedCeiling } from "./ceilings";

/**
 * The sentence for a ceiling at or past its limit. A hard ceiling refuses with it; a soft one
 * sends the same sentence in `x-router-limit-warning`, so it stays plain ASCII.
 */
export function limitReachedSentence(c: WindowedCeiling): string {
  const reached = `This ${c.subjectKind} has reached its ${c.window} spend limit of ${formatUsd(c.limit)}`;
  return c.windowEnd ? `${reached}; the limit resets at ${c.windowEnd.toISOString()}.` : `${reached}.`;
}

/** `$1.00`, `$0.0025`: at least cents, and every further digit that is not zero, exactly. */
export function formatUsd(n: Nanodollars): string {
  const abs = n < 0n ? -n : n;
  const whole = abs / NANOS_PER_USD;
  const frac = (abs % NANOS_PER_USD).toString().padStart(9, "0").replace(/0+$/, "").padEnd(2, "0");
  return `${n < 0n ? "-" : ""}$${whole}.${frac}`;
}
