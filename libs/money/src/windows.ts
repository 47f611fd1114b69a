/** Spend windows are UTC calendar terms: a day, an ISO week (Monday start), a month, or lifetime. */
export type WindowKind = "daily" | "weekly" | "monthly" | "lifetime";

export const WINDOW_KINDS: readonly WindowKind[] = ["daily", "weekly", "monthly", "lifetime"];

export interface WindowSpan {
  /** Inclusive start; the epoch for lifetime. */
  start: Date;
  /** Exclusive end; null for lifetime. */
  end: Date | null;
}

const LIFETIME_START = new Date(0);

/** The calendar window of `kind` that contains `now`. */
export function windowAt(kind: WindowKind, now: Date): WindowSpan {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  switch (kind) {
    case "daily":
      return { start: new Date(Date.UTC(y, m, d)), end: new Date(Date.UTC(y, m, d + 1)) };
    case "weekly": {
      const sinceMonday = (now.getUTCDay() + 6) % 7;
      return {
        start: new Date(Date.UTC(y, m, d - sinceMonday)),
        end: new Date(Date.UTC(y, m, d - sinceMonday + 7)),
      };
    }
    case "monthly":
      return { start: new Date(Date.UTC(y, m, 1)), end: new Date(Date.UTC(y, m + 1, 1)) };
    case "lifetime":
      return { start: LIFETIME_START, end: null };
  }
}

/** A source of the current time; injected everywhere so tests can move it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock a test sets by hand. */
export class ManualClock implements Clock {
  private current: Date;
  constructor(start: Date = new Date("2026-11-21T10:00:00.000Z")) {
    this.current = new Date(start.getTime());
  }
  now(): Date {
    return new Date(this.current.getTime());
  }
  set(d: Date): void {
    this.current = new Date(d.getTime());
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}
