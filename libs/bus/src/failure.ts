import { DomainError } from "@router/errors";

/**
 * Whether an error comes from code rather than from the broker or the network (a `TypeError` and
 * the like, anywhere in its `cause` chain): no retry can fix it, so it stops the work that met it
 * (`BusConfig.onFatal`) instead of being retried forever as an outage.
 */
export function isProgrammingError(err: unknown): boolean {
  let current = err;
  for (let depth = 0; depth < 6 && current instanceof Error; depth++) {
    if (
      current instanceof TypeError ||
      current instanceof RangeError ||
      current instanceof ReferenceError ||
      current instanceof SyntaxError ||
      current instanceof EvalError
    ) {
      return true;
    }
    current = current.cause;
  }
  return false;
}

/**
 * Whether a handler failed because something it depends on is away (its database, another service):
 * an `unavailable` DomainError anywhere in its `cause` chain. Such a failure does not use up the
 * event's attempts: it waits, with backoff, for as long as the outage lasts and is never
 * dead-lettered for it (every event behind it would fail the same way).
 */
export function isOutage(err: unknown): boolean {
  let current = err;
  for (let depth = 0; depth < 6 && current instanceof Error; depth++) {
    if (current instanceof DomainError && current.code === "unavailable") return true;
    current = current.cause;
  }
  return false;
}

/**
 * The default `BusConfig.onFatal`: the failure is logged already; exit, so the orchestrator restarts
 * the service (and its readiness fails meanwhile) instead of keeping one that silently stopped
 * publishing or consuming.
 */
export function exitOnFatal(): void {
  process.exit(1);
}
