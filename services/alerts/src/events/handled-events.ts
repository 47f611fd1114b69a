import type { Queryable } from "@router/db";

/**
 * Records that an event was acted on, by its bus id and by its own id (`sourceId`). False when
 * either was seen before: the event is a redelivery or a republished copy, and nothing is done.
 * Runs inside the transaction that makes the event's effects, so both commit together.
 */
export async function claimEvent(q: Queryable, eventId: string, sourceId: string, topic: string, now: Date): Promise<boolean> {
  const r = await q.query(
    "INSERT INTO handled_events (event_id, source_id, topic, handled_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
    [eventId, sourceId, topic, now],
  );
  return r.rowCount > 0;
}
