/** Money is integer nanodollars (1e-9 USD) as bigint everywhere inside the system. */
export type Nanodollars = bigint;

export const NANOS_PER_USD = 1_000_000_000n;
const TOKENS_PER_MILLION = 1_000_000n;

/** Cost of `tokens` at a price in nanodollars per million tokens, rounded up to a whole nanodollar. */
export function costOfTokens(tokens: number | bigint, pricePerMillion: Nanodollars): Nanodollars {
  const t = BigInt(tokens);
  if (t < 0n) throw new RangeError("token count must not be negative");
  if (pricePerMillion < 0n) throw new RangeError("price must not be negative");
  const product = t * pricePerMillion;
  return (product + TOKENS_PER_MILLION - 1n) / TOKENS_PER_MILLION;
}

/** `bps` basis points (1/100 of a percent) of `amount`, rounded up to a whole nanodollar as every cost is: a fee on an amount. */
export function basisPointsOf(amount: Nanodollars, bps: number): Nanodollars {
  if (!Number.isInteger(bps) || bps < 0) throw new RangeError("basis points must be a whole number, not negative");
  if (amount <= 0n || bps === 0) return 0n;
  return (amount * BigInt(bps) + 9_999n) / 10_000n;
}

/**
 * USD as a JSON number from nanodollars, for the HTTP edge only: the double nearest the exact
 * decimal, so it prints as that decimal and `fromUsd` gives the same nanodollars back for any
 * amount below 2^23 USD (~8.3e6), where doubles are still finer than a nanodollar.
 */
export function toUsd(n: Nanodollars): number {
  const negative = n < 0n;
  const abs = negative ? -n : n;
  const whole = abs / NANOS_PER_USD;
  const frac = abs % NANOS_PER_USD;
  // Parsing the decimal text rounds once; adding whole + frac / 1e9 rounded twice (18.848450798000002).
  const value = Number(`${whole}.${frac.toString().padStart(9, "0")}`);
  return negative ? -value : value;
}

/**
 * The exact decimal USD text of nanodollars, trailing zeros dropped ("0.0000045", "12", "-1.5"),
 * for text formats such as CSV, where a JSON number could print in exponent form (4.5e-7).
 */
export function usdDecimal(n: Nanodollars): string {
  const negative = n < 0n;
  const abs = negative ? -n : n;
  const frac = (abs % NANOS_PER_USD).toString().padStart(9, "0").replace(/0+$/, "");
  const text = frac === "" ? `${abs / NANOS_PER_USD}` : `${abs / NANOS_PER_USD}.${frac}`;
  return negative ? `-${text}` : text;
}

/**
 * Nanodollars from a USD amount given as a JSON number or decimal string. Rounds to the nearest
 * nanodollar via the decimal text, so 0.1 becomes exactly 100000000n rather than a float artefact.
 */
export function fromUsd(usd: number | string): Nanodollars {
  const text = typeof usd === "number" ? numberToPlainDecimal(usd) : usd.trim();
  const m = /^(-)?(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) throw new RangeError(`not a decimal USD amount: ${String(usd)}`);
  const [, sign, whole = "0", fracRaw = ""] = m;
  const frac = (fracRaw + "0000000000").slice(0, 10);
  let nanos = BigInt(whole) * NANOS_PER_USD + BigInt(frac.slice(0, 9));
  if (Number(frac[9]) >= 5) nanos += 1n;
  return sign ? -nanos : nanos;
}

function numberToPlainDecimal(x: number): string {
  if (!Number.isFinite(x)) throw new RangeError(`not a finite USD amount: ${x}`);
  // The shortest text that reads back as x is the decimal the sender wrote; toFixed would expand the
  // binary value instead (5119566.625630626 -> "5119566.6256306265"). toFixed only for exponent forms.
  const shortest = String(x);
  return /e/i.test(shortest) ? x.toFixed(20) : shortest;
}

/** The string form used for `*_nanodollars` JSON fields. */
export function nanosString(n: Nanodollars | null | undefined): string | null {
  return n === null || n === undefined ? null : n.toString();
}

/** Normalises a bigint column value (pg returns strings, PGlite numbers) to bigint. */
export function toNanos(v: string | number | bigint | null | undefined): Nanodollars {
  if (v === null || v === undefined) return 0n;
  if (typeof v === "bigint") return v;
  if (typeof v === "number") return BigInt(Math.trunc(v));
  return BigInt(v);
}

export function maxNanos(...xs: Nanodollars[]): Nanodollars {
  return xs.reduce((a, b) => (b > a ? b : a), 0n);
}
