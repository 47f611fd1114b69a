/**
 * The threshold a channel announces for one crossing: the highest of its thresholds in
 * (previousPercent, percent], or null when the crossing passed none of them. Several thresholds
 * passed at once give one announcement, at the highest (Alerts, in the service README).
 */
export function thresholdToAnnounce(thresholds: readonly number[], previousPercent: number, percent: number): number | null {
  let best: number | null = null;
  for (const t of thresholds) {
    if (t > previousPercent && t <= percent && (best === null || t > best)) best = t;
  }
  return best;
}
