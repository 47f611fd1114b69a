import type { Queryable } from "./db";

export interface DatabaseReadinessOptions {
  /** How long an answer is reused; default 1 s. */
  freshForMs?: number;
  /** A probe not answered within this counts as unreachable; default 2 s. */
  timeoutMs?: number;
}

/**
 * Whether the service's database answers, for its readiness check: a service that cannot reach it
 * leaves rotation, and comes back by itself once it answers again. One `SELECT 1` answers every
 * check within `freshForMs` (several probers, and a public /health, cost the database one query),
 * and a probe still waiting is never sent twice, so a database that hangs does not pile them up.
 * An answer's age is measured on the monotonic clock, not the service's: it is a cache's lifetime,
 * and a test's frozen clock must not freeze readiness.
 */
export class DatabaseReadiness {
  private readonly freshForMs: number;
  private readonly timeoutMs: number;
  private last: { atMs: number; reachable: boolean } | undefined;
  private inFlight: Promise<ProbeOutcome> | undefined;
  /** Why the last probe failed (for the caller's log); undefined after one that succeeded. */
  lastError: unknown;

  constructor(
    private readonly db: Queryable,
    opts: DatabaseReadinessOptions = {},
  ) {
    this.freshForMs = opts.freshForMs ?? 1_000;
    this.timeoutMs = opts.timeoutMs ?? 2_000;
  }

  async reachable(): Promise<boolean> {
    const last = this.last;
    if (last && performance.now() - last.atMs < this.freshForMs) return last.reachable;
    const probe = (this.inFlight ??= this.db.query("SELECT 1").then(
      (): ProbeOutcome => ({ error: undefined }),
      (error: unknown): ProbeOutcome => ({ error: error ?? new Error("the database probe failed") }),
    ));
    // The probe is forgotten once it settles; until then every check waits on the same one.
    void probe.then(() => {
      if (this.inFlight === probe) this.inFlight = undefined;
    });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<ProbeOutcome>((resolve) => {
      timer = setTimeout(() => resolve({ error: new Error(`the database did not answer within ${this.timeoutMs} ms`) }), this.timeoutMs);
    });
    const { error } = await Promise.race([probe, timedOut]);
    clearTimeout(timer);
    this.lastError = error;
    const reachable = error === undefined;
    this.last = { atMs: performance.now(), reachable };
    return reachable;
  }
}

interface ProbeOutcome {
  error: unknown;
}
