import type { Queryable } from "@router/db";

/** The UTC calendar day of an instant, as `YYYY-MM-DD`. */
export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

/** Counts one probe of /health from a region. */
export async function recordProbe(q: Queryable, probe: { region: string; at: Date; up: boolean }): Promise<void> {
  await q.query(
    `INSERT INTO uptime_days (day, region, probes, up) VALUES ($1, $2, 1, $3)
     ON CONFLICT (day, region) DO UPDATE SET probes = uptime_days.probes + 1, up = uptime_days.up + EXCLUDED.up`,
    [utcDay(probe.at), probe.region, probe.up ? 1 : 0],
  );
}

export interface ProbeDay {
  date: string;
  probes: number;
  up: number;
}

/** Probe counts per UTC day, every region together, from `fromDay` to `toDay` inclusive. */
export async function probeDays(q: Queryable, fromDay: string, toDay: string): Promise<ProbeDay[]> {
  const r = await q.query<{ day: string; probes: string | number; up: string | number }>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, sum(probes) AS probes, sum(up) AS up
     FROM uptime_days WHERE day BETWEEN $1 AND $2 GROUP BY day`,
    [fromDay, toDay],
  );
  return r.rows.map((row) => ({ date: row.day, probes: Number(row.probes), up: Number(row.up) }));
}
