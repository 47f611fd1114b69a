import type { ProbeDay } from "./uptime-store";
import { utcDay } from "./uptime-store";

export const UPTIME_DAYS = 90;
/** A day with fewer probes is unmeasured: null, never counted as up. */
export const MIN_PROBES_PER_DAY = 60;

export interface UptimeDay {
  date: string;
  uptime: number | null;
  probes: number;
}

export interface Uptime {
  days: UptimeDay[];
  overall: number | null;
  measured_days: number;
}

/** The first and last UTC day of the window that ends today. */
export function uptimeWindow(now: Date): { from: string; to: string } {
  const first = new Date(now.getTime() - (UPTIME_DAYS - 1) * 86_400_000);
  return { from: utcDay(first), to: utcDay(now) };
}

/**
 * The 90 UTC days ending today, oldest first. `overall` is weighted by probes over the measured
 * days only (a day of many probes counts more than a day of few), null when no day is measured.
 */
export function uptimeOf(counted: ProbeDay[], now: Date): Uptime {
  const byDate = new Map(counted.map((d) => [d.date, d]));
  const days: UptimeDay[] = [];
  let probes = 0;
  let up = 0;
  for (let i = UPTIME_DAYS - 1; i >= 0; i--) {
    const date = utcDay(new Date(now.getTime() - i * 86_400_000));
    const day = byDate.get(date);
    const measured = day !== undefined && day.probes >= MIN_PROBES_PER_DAY;
    days.push({ date, uptime: measured ? day.up / day.probes : null, probes: day?.probes ?? 0 });
    if (measured) {
      probes += day.probes;
      up += day.up;
    }
  }
  return { days, overall: probes > 0 ? up / probes : null, measured_days: days.filter((d) => d.uptime !== null).length };
}
