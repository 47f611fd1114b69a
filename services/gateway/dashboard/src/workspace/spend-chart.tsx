import type { Summary } from "../api/types";
import { money, number } from "../ui/format";

const W = 640;
const H = 180;
const PAD = 24;

type Measure = "spend" | "requests";

/**
 * Day-by-day bars of the current period with the prior period's same day beside them, drawn as
 * SVG attributes (no inline style, which the page's Content-Security-Policy forbids). The same
 * figures follow as a table for screen readers and for exact values.
 */
export function SpendChart({ current, prior, measure }: { current: Summary["daily"]; prior: Summary["daily"]; measure: Measure }) {
  const value = (d: Summary["daily"][number] | undefined) => (d ? d[measure] : 0);
  const max = Math.max(1e-9, ...current.map(value), ...prior.map(value));
  const slot = (W - PAD) / Math.max(1, current.length);
  const bar = Math.max(1, slot / 2 - 1);
  const y = (v: number) => H - PAD - (v / max) * (H - 2 * PAD);
  const fmt = measure === "spend" ? money : number;
  const title = measure === "spend" ? "Spend by day" : "Requests by day";
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={`chart-${measure}-title`} preserveAspectRatio="none">
        <title id={`chart-${measure}-title`}>
          {title}: current period against the prior period, {current.length} days
        </title>
        <line x1={PAD} y1={H - PAD} x2={W} y2={H - PAD} class="axis" />
        {current.map((d, i) => {
          const p = prior[i];
          const x = PAD + i * slot;
          return (
            <g key={d.date} data-date={d.date}>
              <rect class="bar prior" x={x} y={y(value(p))} width={bar} height={H - PAD - y(value(p))} />
              <rect class="bar current" x={x + bar + 1} y={y(value(d))} width={bar} height={H - PAD - y(value(d))} />
            </g>
          );
        })}
        <text x={PAD} y={14} class="label">
          {fmt(max)}
        </text>
        <text x={PAD} y={H - 6} class="label">
          {current[0]?.date ?? ""}
        </text>
        <text x={W - 4} y={H - 6} class="label end">
          {current[current.length - 1]?.date ?? ""}
        </text>
      </svg>
      <figcaption>
        <span class="legend current">This period</span> <span class="legend prior">Prior period</span>
      </figcaption>
      <details>
        <summary>{title} as a table</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col">This period</th>
              <th scope="col">Prior period (same day)</th>
            </tr>
          </thead>
          <tbody>
            {current.map((d, i) => (
              <tr key={d.date}>
                <th scope="row">{d.date}</th>
                <td data-testid={`${measure}-${d.date}`}>{fmt(value(d))}</td>
                <td>{fmt(value(prior[i]))}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
