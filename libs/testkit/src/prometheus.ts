/**
 * The value of one series in Prometheus text exposition: the first line of metric `name` whose
 * labels include every given label. 0 when no such series is exposed yet.
 */
export function metricSample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const found = new Map([...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => found.get(k) === v)) return Number(m[3]);
  }
  return 0;
}
