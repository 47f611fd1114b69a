import type { Db } from "@router/db";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { retentionCutoff } from "./delivery-store";

// Handled-event ids outlive any replay of a topic the brokers keep; a year is far past that.
const HANDLED_EVENTS_KEPT_DAYS = 366;

export interface Pruned {
  deliveries: number;
  announcements: number;
  handledEvents: number;
}

/**
 * Deletes delivery records past the 90-day retention, threshold announcements of windows that have
 * ended by then (every window but `lifetime` is at most a month long), and old handled-event ids.
 */
export async function pruneExpired(db: Db, now: Date): Promise<Pruned> {
  const cutoff = retentionCutoff(now);
  const deliveries = await db.query("DELETE FROM deliveries WHERE created_at <= $1", [cutoff]);
  const announcements = await db.query(
    "DELETE FROM threshold_announcements WHERE window_name <> 'lifetime' AND announced_at <= $1",
    [cutoff],
  );
  const handled = await db.query("DELETE FROM handled_events WHERE handled_at <= $1", [
    new Date(now.getTime() - HANDLED_EVENTS_KEPT_DAYS * 86_400_000),
  ]);
  return { deliveries: deliveries.rowCount, announcements: announcements.rowCount, handledEvents: handled.rowCount };
}

/** Runs `pruneExpired` every `intervalMs` (by the injected clock's time); the first run at once. */
export function schedulePruning(deps: { db: Db; clock: Clock; log: Logger; intervalMs: number }): { prune(): Promise<Pruned>; stop(): void } {
  const prune = async (): Promise<Pruned> => {
    const pruned = await pruneExpired(deps.db, deps.clock.now());
    if (pruned.deliveries + pruned.announcements + pruned.handledEvents > 0) deps.log.info(pruned, "alerts.retention.pruned");
    return pruned;
  };
  const run = () => {
    prune().catch((err: unknown) => deps.log.error({ err }, "alerts.retention.prune_failed"));
  };
  run();
  const timer = setInterval(run, deps.intervalMs);
  timer.unref();
  return {
    prune,
    stop: () => clearInterval(timer),
  };
}
