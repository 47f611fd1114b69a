import { useState } from "preact/hooks";
import { api, query } from "../api/client";
import type { Breakdown, BreakdownDimension, BreakdownGroup } from "../api/types";
import { Show, useLoad } from "../ui/async";
import { compactNumber, money, number } from "../ui/format";
import { Money } from "../ui/money";
import { TimeChart, type ChartSeries } from "../ui/time-chart";

/** Distinct on white at AA contrast; the last is "everything else". */
const PALETTE = ["#1446a0", "#8a5a00", "#0f7b6c", "#a4161a", "#6b3fa0", "#5b6470"];
/** Groups drawn in the chart; the rest are one "Everything else" layer. */
const CHARTED = 5;

const DIMENSIONS: Array<{ id: BreakdownDimension; name: string; none: string }> = [
  { id: "model", name: "Model", none: "no model" },
  { id: "provider", name: "Provider", none: "not dispatched" },
  { id: "key", name: "Key", none: "no key" },
  { id: "app", name: "App", none: "no app named" },
  { id: "agent", name: "Agent", none: "no agent named" },
];

function nameOf(g: BreakdownGroup, by: BreakdownDimension): string {
  const none = DIMENSIONS.find((d) => d.id === by)?.none ?? "none";
  if (by === "key") return g.label ?? (g.value ? `${g.value.slice(0, 12)}…` : none);
  if (by === "app") return g.label || g.value || none;
  return g.value ?? none;
}

/**
 * The period's spend and requests split by model, provider, key, app or agent: each group's share
 * as a bar (a `<meter>`, so no inline style), its spend with the exact amount on hover, requests,
 * errors and tokens; a line's name shows its requests in the list below. The rest past the top ten
 * is one "Everything else" line.
 */
export function BreakdownPanel({ days, onPick }: { days: number; onPick: (filter: "model" | "provider" | "key" | "app" | "agent", value: string) => void }) {
  const [by, setBy] = useState<BreakdownDimension>("model");
  const load = useLoad(() => api.get<Breakdown>(`/v1/activity/breakdown${query({ by, days, daily: true })}`), [by, days]);
  return (
    <section class="card" aria-labelledby="breakdown-heading">
      <div class="section-head">
        <h3 id="breakdown-heading">Spend by {DIMENSIONS.find((d) => d.id === by)?.name.toLowerCase()}</h3>
        <div class="segmented" role="group" aria-label="Break down by">
          {DIMENSIONS.map((d) => (
            <button key={d.id} type="button" aria-pressed={d.id === by} onClick={() => setBy(d.id)}>
              {d.name}
            </button>
          ))}
        </div>
      </div>
      <Show load={load} what="the breakdown">
        {(b) => {
          const rows = b.others ? [...b.groups, b.others] : b.groups;
          const total = rows.reduce((s, g) => s + g.spend, 0);
          const totalRequests = rows.reduce((s, g) => s + g.requests, 0);
          if (rows.length === 0) return <p>No requests in this window.</p>;
          // Shares of spend; with no spend at all (free models, refusals), shares of requests.
          const share = (g: BreakdownGroup) => (total > 0 ? g.spend / total : totalRequests > 0 ? g.requests / totalRequests : 0);
          const name = (g: BreakdownGroup) => (g === b.others ? "Everything else" : nameOf(g, b.by));
          const measure = total > 0 ? "spend" : "requests";
          return (
            <>
              <StackedByDay
                groups={rows.slice(0, CHARTED)}
                rest={rows.slice(CHARTED)}
                name={name}
                measure={measure}
                dimension={DIMENSIONS.find((d) => d.id === b.by)?.name.toLowerCase() ?? b.by}
              />
              <div class="scroll" tabIndex={0}>
                <table class="breakdown" data-testid={`breakdown-${b.by}`}>
                  <thead>
                    <tr>
                      <th scope="col">{DIMENSIONS.find((d) => d.id === b.by)?.name}</th>
                      <th scope="col">Share of {total > 0 ? "spend" : "requests"}</th>
                      <th scope="col">Spend (list price)</th>
                      <th scope="col">Requests</th>
                      <th scope="col">Errors</th>
                      <th scope="col">Tokens</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((g, i) => {
                      const label = name(g);
                      const pct = Math.round(share(g) * 1000) / 10;
                      return (
                        <tr key={`${g.value ?? ""}-${i}`}>
                          <th scope="row" class="wrap">
                            {g === b.others || g.value === null ? (
                              label
                            ) : (
                              // The line's requests, in the list below (every dimension is one of its filters).
                              <button type="button" class="link" title={`Show the requests of ${label}`} onClick={() => onPick(b.by, g.value ?? "")}>
                                {label}
                              </button>
                            )}
                          </th>
                          <td title={`${pct}%`}>
                            <meter min={0} max={1} value={share(g)} aria-label={`${label}: ${pct}%`} /> <span class="hint">{pct}%</span>
                          </td>
                          <td>
                            <Money value={g.spend} />
                          </td>
                          <td>{number(g.requests)}</td>
                          <td>{number(g.errors)}</td>
                          <td>{number(g.tokens)}</td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </div>
            </>
          );
        }}
      </Show>
    </section>
  );
}

/** The biggest groups' spend (or requests, when nothing was spent) by day, stacked: the first group at the bottom. */
function StackedByDay({ groups, rest, name, measure, dimension }: { groups: BreakdownGroup[]; rest: BreakdownGroup[]; name: (g: BreakdownGroup) => string; measure: "spend" | "requests"; dimension: string }) {
  const days = groups[0]?.daily?.map((d) => d.date) ?? [];
  if (days.length === 0) return null;
  const valuesOf = (g: BreakdownGroup) => (g.daily ?? []).map((d) => d[measure]);
  const series: ChartSeries[] = groups.map((g, i) => ({ label: name(g), values: valuesOf(g), kind: "bars", colour: PALETTE[i] ?? "#5b6470" }));
  if (rest.length > 0) {
    const summed = days.map((_d, i) => rest.reduce((s, g) => s + (g.daily?.[i]?.[measure] ?? 0), 0));
    series.push({ label: "Everything else", values: summed, kind: "bars", colour: PALETTE[PALETTE.length - 1] ?? "#5b6470" });
  }
  const what = measure === "spend" ? "Spend" : "Requests";
  return (
    <figure class="chart flat" aria-labelledby="breakdown-chart-title">
      <figcaption id="breakdown-chart-title">
        <strong>
          {what} by day and {dimension}
        </strong>{" "}
        <span class="hint">(stacked; hover a day for each one's value; the table below has the period's figures)</span>
      </figcaption>
      <TimeChart
        label={`${what} by day, stacked by ${dimension}: ${series.map((s) => s.label).join(", ")}`}
        days={days}
        series={series}
        stack
        format={measure === "spend" ? money : number}
        axisFormat={measure === "spend" ? money : compactNumber}
      />
    </figure>
  );
}
