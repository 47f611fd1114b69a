import { invalid } from "@router/errors";
import { windowAt } from "@router/money";

/** A UTC calendar month, the period of a client report and of a rollup row. */
export interface ReportMonth {
  /** `YYYY-MM`. */
  label: string;
  /** Inclusive: the first instant of the month, UTC. */
  start: Date;
  /** Exclusive: the first instant of the next month, UTC. */
  end: Date;
}

// A year from 1970 (the epoch; Date.UTC reads years 0-99 as 1900-1999) and a month 01-12: `2026-11`.
const MONTH_TEXT = /^(19[7-9]\d|[2-9]\d{3})-(0[1-9]|1[0-2])$/;

/** The UTC month that contains `at`. */
export function monthOf(at: Date): ReportMonth {
  const { start, end } = windowAt("monthly", at);
  return { label: start.toISOString().slice(0, 7), start, end: end ?? start };
}

/** The UTC date of `at`, `YYYY-MM-DD`. */
export function dayOf(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** The UTC dates from the month's first day to `last` (inclusive), `YYYY-MM-DD` each. */
export function daysOf(month: ReportMonth, last: Date): string[] {
  const days: string[] = [];
  for (let d = month.start; d < month.end && d <= last; d = new Date(d.getTime() + 86_400_000)) days.push(dayOf(d));
  return days;
}

/**
 * The `month` query parameter: absent or empty means the current UTC month; otherwise `YYYY-MM`,
 * no later than the current month (a report of a month that has not begun would be empty by
 * definition, so asking for one is a mistake worth naming). Anything else is a 400 naming `month`.
 */
export function requestedMonth(raw: unknown, now: Date): ReportMonth {
  const current = monthOf(now);
  if (raw === undefined || raw === "") return current;
  if (typeof raw !== "string") throw invalid("month", "give one month as YYYY-MM");
  if (!MONTH_TEXT.test(raw)) throw invalid("month", "expected YYYY-MM, a UTC calendar month from 1970 (e.g. 2026-11)");
  const month = monthOf(new Date(`${raw}-01T00:00:00.000Z`));
  if (month.start > current.start) throw invalid("month", `${raw} has not begun yet; the latest month is ${current.label}`);
  return month;
}
