import type { BatchHandler, EventBus, IncomingEvent, Subscription } from "@router/bus";
import type { Db } from "@router/db";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { events, eventViews, TOPICS } from "@router/proto";
import type { Broadcaster } from "../delivery/broadcaster";
import type { BroadcastMetrics } from "../metrics";
import { isSampled } from "../records/sampling";
import { claimEvents } from "./handled-events";

export const REQUEST_COMPLETED_TOPIC = TOPICS.requestCompleted;
export const CONSUMER_GROUP = "broadcast";

export interface ConsumerDeps {
  db: Db;
  broadcaster: Broadcaster;
  log: Logger;
  clock: Clock;
  metrics: BroadcastMetrics;
}

/**
 * What `decode` reads of the event, or a throw (logged with its event id, never the payload: opaque
 * bytes that could hold anything) so the bus retries it and then dead-letters it.
 */
function decodeOrThrow<T extends { requestId: string; orgId: string }>(event: IncomingEvent, deps: ConsumerDeps, decode: (payload: Uint8Array) => T): T {
  let reason: string;
  try {
    const decoded = decode(event.payload);
    // Without them a request can be neither claimed nor addressed to an organisation's destinations.
    if (decoded.requestId !== "" && decoded.orgId !== "") return decoded;
    reason = "it lacks request_id or org_id";
  } catch (err) {
    reason = err instanceof Error ? err.message : String(err);
  }
  deps.log.error({ eventId: event.id, attempt: event.attempt, reason }, "broadcast.event.undecodable");
  deps.metrics.consumed("undecodable");
  throw new Error(`request.completed payload cannot be used: ${reason}`);
}

/**
 * The handler for consecutive `router.request.completed.v1` deliveries: read each event's request
 * and organisation (RequestCompletedRef: the rest is skipped, not decoded), then in one transaction
 * read the organisations' active destinations, decode the whole event of each request that has one,
 * and claim the new ones; then queue one delivery per sampled destination. Most organisations have
 * no destination, and their events are never decoded whole. Queuing never waits for a receiver, so
 * a slow one does not slow the consumer (and the gateway never waits for either).
 */
export function requestsCompletedHandler(deps: ConsumerDeps): BatchHandler {
  return async (delivered) => {
    const refs = delivered.map((event) => {
      const { requestId, orgId } = decodeOrThrow(event, deps, (b) => eventViews.RequestCompletedRef.decode(b));
      return { eventId: event.id, requestId, orgId, event };
    });
    const whole = new Map<string, events.RequestCompleted>();
    // Before the claim, so that an event that cannot be decoded whole fails the batch and is
    // retried, then dead-lettered, instead of being marked handled and never delivered.
    const decodeWhole = (relevant: readonly (typeof refs)[number][]) => {
      for (const r of relevant) whole.set(r.eventId, decodeOrThrow(r.event, deps, (b) => events.RequestCompleted.decode(b)));
    };
    const { fresh, destinations } = await claimEvents(deps.db, refs, deps.clock.now(), decodeWhole);
    for (const { eventId, requestId, orgId } of refs) {
      const targets = destinations.get(orgId) ?? [];
      if (targets.length === 0) {
        deps.metrics.consumed("no_destination");
        continue;
      }
      // An event twice in one batch was claimed once: the first copy is the new one.
      const isNew = fresh.delete(eventId);
      deps.metrics.consumed(isNew ? "new" : "duplicate");
      const request = whole.get(eventId);
      if (!isNew || !request) continue;
      for (const destination of targets) {
        if (isSampled(requestId, destination.sample_rate)) deps.broadcaster.enqueue(destination, request);
        else deps.metrics.notSampled(destination.kind);
      }
    }
  };
}

/** The handler for one delivery: a batch of one. */
export function requestCompletedHandler(deps: ConsumerDeps): (event: IncomingEvent) => Promise<void> {
  const handleBatch = requestsCompletedHandler(deps);
  return (event) => handleBatch([event]);
}

export function subscribeRequestCompleted(bus: EventBus, deps: ConsumerDeps): Promise<Subscription> {
  return bus.subscribe({
    topic: REQUEST_COMPLETED_TOPIC,
    group: CONSUMER_GROUP,
    handler: requestCompletedHandler(deps),
    batchHandler: requestsCompletedHandler(deps),
  });
}
