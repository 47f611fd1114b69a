import type { Db } from "@router/db";
import { activeDestinationsOf, type DestinationRow } from "../destinations/destination-store";

export interface CompletedRef {
  eventId: string;
  requestId: string;
  orgId: string;
}

/**
 * In one transaction: the active destinations of the batch's organisations, and the events among
 * `batch` whose organisation has one, marked handled. Returns those newly marked (an event id or a
 * request id seen before is a duplicate) with their destinations. Committed before any delivery is
 * queued, so a redelivered or replayed event never reaches a destination twice; an event of an
 * organisation without destinations leaves no row at all. `beforeClaim` sees the events about to be
 * marked first: when it throws, nothing is marked and the batch fails as a whole.
 */
export async function claimEvents<R extends CompletedRef>(
  db: Db,
  batch: readonly R[],
  handledAt: Date,
  beforeClaim: (relevant: readonly R[]) => void = () => undefined,
): Promise<{ fresh: Set<string>; destinations: Map<string, DestinationRow[]> }> {
  // Statements only, nothing else: a run whose connection was lost before COMMIT may run again.
  return db.tx(
    async (q) => {
      const orgIds = [...new Set(batch.map((e) => e.orgId))];
      const destinations = new Map<string, DestinationRow[]>();
      for (const d of await activeDestinationsOf(q, orgIds)) {
        destinations.set(d.org_id, [...(destinations.get(d.org_id) ?? []), d]);
      }
      const relevant = batch.filter((e) => destinations.has(e.orgId));
      if (relevant.length === 0) return { fresh: new Set<string>(), destinations };
      beforeClaim(relevant);
      const { rows } = await q.query<{ event_id: string }>(
        `INSERT INTO handled_events (event_id, request_id, handled_at)
         SELECT e, r, $3 FROM unnest($1::text[], $2::text[]) AS t(e, r)
         ON CONFLICT DO NOTHING
         RETURNING event_id`,
        [relevant.map((e) => e.eventId), relevant.map((e) => e.requestId), handledAt],
      );
      return { fresh: new Set(rows.map((r) => r.event_id)), destinations };
    },
    { retryOnConnectionLoss: true },
  );
}

/** Forgets events handled before `before`; a replay older than the retention may deliver again. */
export async function pruneHandledEvents(db: Db, before: Date): Promise<number> {
  const { rowCount } = await db.query("DELETE FROM handled_events WHERE handled_at < $1", [before]);
  return rowCount;
}
