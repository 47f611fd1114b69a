import type { BatchHandler, EventBus, IncomingEvent, Subscription } from "@router/bus";
import type { Db } from "@router/db";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { events, TOPICS } from "@router/proto";
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
 * The event, or a throw (logged with its event id, never the payload: opaque bytes that could hold
 * anything) so the bus retries it and then dead-letters it.
 */
function decode(event: IncomingEvent, deps: ConsumerDeps): events.RequestCompleted {
  let reason: string;
  try {
    const decoded = events.RequestCompleted.decode(event.payload);
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
 * The handler for consecutive `router.request.completed.v1` deliveries: decode all, claim the new
 * ones and read the organisations' active destinations in one transaction, then queue one delivery
 * per sampled destination. Queuing never waits for a receiver, so a slow one does not slow the
 * consumer (and the gateway never waits for either).
 */
export function requestsCompletedHandler(deps: ConsumerDeps): BatchHandler {
  return async (delivered) => {
    const completed = delivered.map((event) => ({ eventId: event.id, request: decode(event, deps) }));
    const refs = completed.map(({ eventId, request }) => ({ eventId, requestId: request.requestId, orgId: request.orgId }));
    const { fresh, destinations } = await claimEvents(deps.db, refs, deps.clock.now());
    for (const { eventId, request } of completed) {
      const targets = destinations.get(request.orgId) ?? [];
      if (targets.length === 0) {
        deps.metrics.consumed("no_destination");
        continue;
      }
      // An event twice in one batch was claimed once: the first copy is the new one.
      const isNew = fresh.delete(eventId);
      deps.metrics.consumed(isNew ? "new" : "duplicate");
      if (!isNew) continue;
      for (const destination of targets) {
        if (isSampled(request.requestId, destination.sample_rate)) deps.broadcaster.enqueue(destination, request);
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
