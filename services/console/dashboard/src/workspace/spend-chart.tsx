import type { Summary } from "../api/types";
import { compactNumber, money, number } from "../ui/format";
import { TimeChart } from "../ui/time-chart";

type Measure = "spend" | "requests";

const CURRENT = "#1446a0";
const PRIOR = "#8a5a00";

/**
 * Day-by-day bars of the current period with the prior period's same day as a dashed line, drawn by
 * uPlot with axes and the hovered day's values. The same figures follow as a table, for screen
 * readers and exact values.
 */
export function SpendChart({ current, prior, measure }: { current: Summary["daily"]; prior: Summary["daily"]; measure: Measure }) {
  const value = (d: Summary["daily"][number] | undefined) => (d ? d[measure] : 0);
  const fmt = measure === "spend" ? money : number;
  const title = measure === "spend" ? "Spend by day" : "Requests by day";
  return (
    <figure class="chart" aria-labelledby={`chart-${measure}-title`}>
      <figcaption id={`chart-${measure}-title`}>
        <strong>{title}</strong> <span class="hint">(UTC days; hover a day for its values)</span>
      </figcaption>
      <TimeChart
        label={`${title}: this period as bars, the prior period as a dashed line, ${current.length} days`}
        days={current.map((d) => d.date)}
        format={fmt}
        axisFormat={measure === "spend" ? money : compactNumber}
        series={[
          { label: "This period", values: current.map(value), kind: "bars", colour: CURRENT },
          { label: "Prior period", values: current.map((_d, i) => value(prior[i])), kind: "line", colour: PRIOR },
        ]}
      />
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
