import { metricSample } from "@router/testkit";

const METRIC = "gateway_overhead_seconds";

/** Cumulative bucket counts of the gateway's own overhead histogram, by upper bound in seconds. */
export type OverheadBuckets = Map<number, number>;

/** Scrapes the gateway's metrics listener for `gateway_overhead_seconds` buckets. */
export async function scrapeOverhead(metricsUrl: string): Promise<OverheadBuckets> {
  const text = await (await fetch(metricsUrl)).text();
  const out: OverheadBuckets = new Map();
  for (const m of text.matchAll(new RegExp(`^${METRIC}_bucket\\{[^}]*le="([^"]+)"[^}]*\\} `, "gm"))) {
    const le = m[1] === "+Inf" ? Number.POSITIVE_INFINITY : Number(m[1]);
    out.set(le, metricSample(text, `${METRIC}_bucket`, { le: m[1] ?? "" }));
  }
  return out;
}

/**
 * The upper bound (ms) of the bucket holding the p-th percentile of what was observed between two
 * scrapes: "p99 ≤ 2 ms" as the gateway measured itself, handler start to response minus the
 * provider call. Null when nothing was observed.
 */
export function overheadPercentileMs(before: OverheadBuckets, after: OverheadBuckets, p: number): number | null {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const count = (le: number) => (after.get(le) ?? 0) - (before.get(le) ?? 0);
  const total = count(Number.POSITIVE_INFINITY);
  if (total <= 0) return null;
  const le = bounds.find((b) => count(b) >= (p / 100) * total) ?? Number.POSITIVE_INFINITY;
  return le * 1000;
}
