/** Every row is measured this many times (BENCH_ROUNDS, default 1), interleaved; figures are reported per round and as the median. */
export const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? "1"));

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? Number.NaN) : +(((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2).toFixed(2);
}

/** A difference in ms with its sign: "+0.85", "-0.12". */
export function signed(value: number): string {
  return value >= 0 ? `+${value}` : String(value);
}

/** The median of a row's per-round differences, then each round's when there are several: "+0.85 ms [+0.80, +0.85, +0.91]". */
export function showRounds(values: number[]): string {
  return `${signed(median(values))} ms${ROUNDS > 1 ? ` [${values.map(signed).join(", ")}]` : ""}`;
}
