import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface ChartSeries {
  label: string;
  values: number[];
  /** Bars for the measure itself, a dashed line for a comparison (the prior period). */
  kind: "bars" | "line";
  colour: string;
}

/**
 * Series stacked as bars, the first at the bottom: each is drawn at the running total up to it,
 * tallest first, so the later (shorter) ones paint their share over it. The legend lists them top of
 * the stack first and shows each one's own value, not the running total.
 */
function stacked(series: ChartSeries[]): { drawn: ChartSeries[]; own: number[][] } {
  const totals: number[][] = [];
  series.forEach((s, i) => totals.push(s.values.map((v, d) => v + (i > 0 ? (totals[i - 1]?.[d] ?? 0) : 0))));
  const order = series.map((_s, i) => i).reverse();
  return {
    drawn: order.map((i) => ({ ...(series[i] as ChartSeries), values: totals[i] ?? [] })),
    own: order.map((i) => series[i]?.values ?? []),
  };
}

const HEIGHT = 220;
const dayOf = (d: string): number => Date.parse(`${d}T00:00:00Z`) / 1000;
// The days are UTC days: the axis and the hover label read them in UTC, not the browser's zone.
const utc = (ts: number): Date => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC");
const dayLabel = new Intl.DateTimeFormat("en-US", { month: "short", day: "numeric", timeZone: "UTC" });

/**
 * A day-by-day chart drawn by uPlot (canvas): axes with the measure's own units, and the hovered
 * day's values in the legend above it. `format` writes a value (money or a count). The chart is a
 * picture to screen readers (`label`); the caller shows the same figures as a table.
 */
export function TimeChart({
  label,
  days,
  series,
  format,
  axisFormat,
  stack = false,
}: {
  label: string;
  days: string[];
  series: ChartSeries[];
  format: (v: number) => string;
  axisFormat?: (v: number) => string;
  /** Stack the series (all bars) into one bar a day. */
  stack?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const { drawn, own } = stack ? stacked(series) : { drawn: series, own: series.map((s) => s.values) };
    const opts: uPlot.Options = {
      width: Math.max(240, el.clientWidth),
      height: HEIGHT,
      tzDate: utc,
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [
        { stroke: "#4a5360", grid: { show: false }, values: (_u, splits) => splits.map((s) => dayLabel.format(new Date(s * 1000))) },
        {
          stroke: "#4a5360",
          grid: { stroke: "#e3e7ec" },
          values: (_u, splits) => splits.map((s) => (axisFormat ?? format)(s)),
          // Wide enough for the longest label ($0.000015), whatever the scale.
          size: (_u, values) => 18 + 7 * Math.max(4, ...(values ?? []).map((v) => String(v).length)),
        },
      ],
      series: [
        { label: "Day", value: (_u, v) => (v === null ? "" : dayLabel.format(new Date(v * 1000))) },
        ...drawn.map((s, i) => ({
          label: s.label,
          stroke: s.colour,
          width: s.kind === "line" ? 2 : 1,
          dash: s.kind === "line" ? [6, 4] : undefined,
          fill: s.kind === "bars" ? s.colour : undefined,
          paths: s.kind === "bars" ? uPlot.paths.bars?.({ size: [0.7, 48], align: 0 }) : undefined,
          points: { show: s.kind === "line" && days.length <= 14 },
          value: (_u: uPlot, v: number | null, _s: number, idx: number | null) => (v === null || idx === null ? "" : format(own[i]?.[idx] ?? v)),
        })),
      ],
      legend: { live: true },
      // Away from the chart, the legend shows the latest day, so the values read without a pointer.
      hooks: {
        ready: [(u) => u.setLegend({ idx: days.length - 1 })],
        setCursor: [(u) => u.cursor.idx == null && u.setLegend({ idx: days.length - 1 })],
      },
      cursor: { drag: { x: false, y: false } },
    };
    const chart = new uPlot(opts, [days.map(dayOf), ...drawn.map((s) => s.values)], el);
    // Follows the card's width (a phone turned, a window resized).
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(240, el.clientWidth), height: HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [days.join(), series.map((s) => `${s.label}:${s.values.join()}`).join("|"), label, stack]);
  return <div class="time-chart" ref={box} role="img" aria-label={label} />;
}
