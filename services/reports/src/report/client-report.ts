import { toNanos, toUsd } from "@router/money";
import type { Branding } from "../branding/branding";
import { daysOf, type ReportMonth } from "../months/report-month";
import { ROLLUP_COUNTERS, type RollupCounter, type RollupRow } from "../rollups/rollup-store";

type Counters = Record<RollupCounter, bigint>;

/** The figures of one report line, and of the totals. Amounts are list price. */
export interface UsageFigures {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  /** Prompt plus completion (cached tokens are part of the prompt, reasoning of the completion). */
  total_tokens: number;
  /** USD at list price. */
  spend: number;
  spend_nanodollars: string;
}

export interface ClientReport {
  workspace: { id: string; name: string; name_in_month: string | null };
  month: string;
  period: { start: string; end: string; ended: boolean };
  branding: Branding;
  currency: "USD";
  totals: UsageFigures & { requests_by_status: { complete: number; error: number; refused: number; cancelled: number } };
  by_model: Array<{ model: string | null } & UsageFigures>;
  by_agent: Array<{ agent: string | null } & UsageFigures>;
  by_day: Array<{ date: string } & UsageFigures>;
  generated_at: string;
}

const zero = (): Counters => Object.fromEntries(ROLLUP_COUNTERS.map((c) => [c, 0n])) as Counters;

function countersOf(row: RollupRow): Counters {
  return Object.fromEntries(ROLLUP_COUNTERS.map((c) => [c, toNanos(row[c])])) as Counters;
}

function add(into: Counters, c: Counters): Counters {
  for (const k of ROLLUP_COUNTERS) into[k] += c[k];
  return into;
}

function figures(c: Counters): UsageFigures {
  return {
    requests: Number(c.requests),
    prompt_tokens: Number(c.prompt_tokens),
    completion_tokens: Number(c.completion_tokens),
    cached_tokens: Number(c.cached_tokens),
    reasoning_tokens: Number(c.reasoning_tokens),
    total_tokens: Number(c.prompt_tokens + c.completion_tokens),
    spend: toUsd(c.list_cost_nanodollars),
    spend_nanodollars: c.list_cost_nanodollars.toString(),
  };
}

/** Most spend first, then most requests, then by name; the unnamed line ("none") last. */
function bySpend<T extends { key: string; c: Counters }>(a: T, b: T): number {
  if (a.c.list_cost_nanodollars !== b.c.list_cost_nanodollars) return a.c.list_cost_nanodollars > b.c.list_cost_nanodollars ? -1 : 1;
  if (a.c.requests !== b.c.requests) return a.c.requests > b.c.requests ? -1 : 1;
  if ((a.key === "") !== (b.key === "")) return a.key === "" ? 1 : -1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

function linesOf(rows: RollupRow[], dimension: RollupRow["dimension"]): Array<{ key: string; c: Counters }> {
  return rows
    .filter((r) => r.dimension === dimension)
    .map((r) => ({ key: r.key, c: countersOf(r) }))
    .sort(bySpend);
}

export interface ReportInput {
  /** The workspace as the gateway named it: its id and current name. */
  workspace: { id: string; name: string };
  /** The name the workspace carried on its latest request of the month; null without requests. */
  nameInMonth: string | null;
  month: ReportMonth;
  branding: Branding;
  rows: RollupRow[];
  now: Date;
}

/**
 * A client's month as a report, from the month's rollup rows only. Each dimension partitions the
 * month's requests, so every breakdown adds up to the totals; `by_day` lists every day of the
 * period so far, days without requests as zeros.
 */
export function clientReport(input: ReportInput): ClientReport {
  const { month, now } = input;
  const days = new Map(linesOf(input.rows, "day").map((l) => [l.key, l.c]));
  const totals = [...days.values()].reduce(add, zero());
  return {
    workspace: { id: input.workspace.id, name: input.workspace.name, name_in_month: input.nameInMonth },
    month: month.label,
    period: { start: month.start.toISOString(), end: month.end.toISOString(), ended: now >= month.end },
    branding: input.branding,
    currency: "USD",
    totals: {
      ...figures(totals),
      requests_by_status: {
        complete: Number(totals.complete_requests),
        error: Number(totals.error_requests),
        refused: Number(totals.refused_requests),
        cancelled: Number(totals.cancelled_requests),
      },
    },
    by_model: linesOf(input.rows, "model").map((l) => ({ model: l.key || null, ...figures(l.c) })),
    by_agent: linesOf(input.rows, "agent").map((l) => ({ agent: l.key || null, ...figures(l.c) })),
    by_day: daysOf(month, now).map((date) => ({ date, ...figures(days.get(date) ?? zero()) })),
    generated_at: now.toISOString(),
  };
}
