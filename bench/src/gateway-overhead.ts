import { metricSample } from "@router/testkit";

const METRIC = "gateway_overhead_seconds";
const GC_KINDS = ["minor", "major", "incremental", "weakcb"] as const;

/** Cumulative bucket counts of the gateway's own overhead histogram, by upper bound in seconds. */
export type OverheadBuckets = Map<number, number>;

/** What one scrape of the gateway's metrics listener says about its overhead and its GC pauses. */
export interface GatewaySample {
  overhead: OverheadBuckets;
  /** Cumulative GC pauses by V8 kind (`nodejs_gc_duration_seconds`): how many, and seconds in all. */
  gc: Map<string, { count: number; seconds: number }>;
}

/** Scrapes the gateway's metrics listener. */
export async function scrapeGateway(metricsUrl: string): Promise<GatewaySample> {
  const text = await (await fetch(metricsUrl)).text();
  const gc = new Map(
    GC_KINDS.map((kind) => [
      kind,
      {
        count: metricSample(text, "nodejs_gc_duration_seconds_count", { kind }),
        seconds: metricSample(text, "nodejs_gc_duration_seconds_sum", { kind }),
      },
    ]),
  );
  return { overhead: overheadBuckets(text), gc };
}

/** "minor 412 × 1.9 ms, major 3 × 8.1 ms": GC pauses between two scrapes, with their mean. */
export function gcPauses(before: GatewaySample, after: GatewaySample): string {
  const parts: string[] = [];
  for (const kind of GC_KINDS) {
    const a = after.gc.get(kind);
    const b = before.gc.get(kind);
    const count = (a?.count ?? 0) - (b?.count ?? 0);
    if (count <= 0) continue;
    const ms = (((a?.seconds ?? 0) - (b?.seconds ?? 0)) * 1000) / count;
    parts.push(`${kind} ${count} × ${ms.toFixed(1)} ms`);
  }
  return parts.join(", ") || "none";
}

function overheadBuckets(text: string): OverheadBuckets {
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
