// The query schemas themselves are the API description's (@router/management-api, `activity`).

/** Start of the `days` window ending now; no window when `days` was not given. */
export function windowStart(now: Date, days: number | undefined): Date | undefined {
  return days === undefined ? undefined : new Date(now.getTime() - days * 86_400_000);
}

/** Query values with empty parameters dropped: `?model=` means no model filter, as a form would send it. */
export function queryOf(query: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(query).filter(([, v]) => v !== ""));
}
