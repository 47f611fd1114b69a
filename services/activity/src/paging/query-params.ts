import { z } from "zod";

/** A whole number given as query text within [min, max]. */
export function intParam(min: number, max: number) {
  return z
    .string()
    .regex(/^\d{1,9}$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
}

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;
export const MAX_DAYS = 3650;

/** Query parameters every newest-first list of this service takes. */
export const pagingParams = {
  limit: intParam(1, MAX_LIMIT).default(DEFAULT_LIMIT),
  cursor: z.string().optional(),
  /** A window ending now, in days. */
  days: intParam(1, MAX_DAYS).optional(),
};

// Workspace ids are `ws_` plus base62 (hex is a subset).
const WORKSPACE_ID = /^ws_[A-Za-z0-9]{1,64}$/;

/**
 * A `workspace` filter. The gateway has already refused a malformed one and another organisation's;
 * this service checks the form again, and every query is scoped to the caller's organisation anyway.
 */
export const workspaceFilter = z.string().regex(WORKSPACE_ID, "must be a workspace id (ws_...)").optional();

/** A free-text filter that matches one stored value exactly. */
export const textFilter = z.string().max(200, "is too long").optional();

/** Start of the `days` window ending now; no window when `days` was not given. */
export function windowStart(now: Date, days: number | undefined): Date | undefined {
  return days === undefined ? undefined : new Date(now.getTime() - days * 86_400_000);
}

/** Query values with empty parameters dropped: `?model=` means no model filter, as a form would send it. */
export function queryOf(query: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(query).filter(([, v]) => v !== ""));
}
