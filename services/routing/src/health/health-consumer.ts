import type { BatchHandler, EventBus, IncomingEvent, Subscription } from "@router/bus";
import type { Db } from "@router/db";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { events, TOPICS } from "@router/proto";
import type { RoutingMetrics } from "../metrics";
import type { PinStore } from "../sticky/pin-store";
import { pinOfServed } from "../sticky/served-pin";
import { healthIncrements } from "./health-increments";
import { recordHealth } from "./health-store";

export const REQUEST_COMPLETED_TOPIC = TOPICS.requestCompleted;
/** Consumer group = service name: every routing replica shares one group. */
export const CONSUMER_GROUP = "routing";

export interface HealthConsumerDeps {
  db: Db;
  log: Logger;
  clock: Clock;
  /** Counts each delivery by result; none when omitted. */
  metrics?: RoutingMetrics;
  /** Where the endpoint that served a sticky request is pinned; no pins are written when omitted. */
  pins?: PinStore;
}

/**
 * The handler for consecutive `router.request.completed.v1` deliveries: their attempts become
 * bucket counts, recorded with the event ids in one statement; then each sticky request's serving
 * endpoint is pinned (a redelivery pins again, harmlessly: a pin never goes back to an older
 * request's endpoint; a pin that cannot be written is logged, not retried: pins are a preference,
 * and the health counts must not go to the dead-letter topic for them). An undecodable payload throws, so the bus retries each event of the batch
 * alone and then moves that one to the dead-letter topic.
 */
export function requestsCompletedHandler(deps: HealthConsumerDeps): BatchHandler {
  return async (delivered) => {
    const now = deps.clock.now();
    const decoded = delivered.map((event) => ({ id: event.id, completed: decode(event, deps) }));
    const batch = decoded.map(({ id, completed }) => ({ eventId: id, increments: healthIncrements(completed, now) }));
    const counted = await recordHealth(deps.db, batch, now);
    if (deps.pins) await recordPins(deps.pins, decoded.map((d) => d.completed), deps.log);
    for (const { eventId, increments } of batch) {
      const duplicate = !counted.has(eventId);
      deps.metrics?.consumed(duplicate ? "duplicate" : "recorded");
      deps.log.debug({ eventId, endpoints: increments.length, duplicate }, "routing.health.event_recorded");
    }
  };
}

async function recordPins(pins: PinStore, completed: events.RequestCompleted[], log: Logger): Promise<void> {
  for (const c of completed) {
    const pin = pinOfServed(c);
    if (!pin) continue;
    try {
      await pins.record(pin);
    } catch (err) {
      log.warn({ err, requestId: c.requestId }, "routing.sticky.pin_failed");
    }
  }
}

/** The handler for one delivery: a batch of one. */
export function requestCompletedHandler(deps: HealthConsumerDeps): (event: IncomingEvent) => Promise<void> {
  const handleBatch = requestsCompletedHandler(deps);
  return (event) => handleBatch([event]);
}

function decode(event: IncomingEvent, deps: HealthConsumerDeps): events.RequestCompleted {
  try {
    return events.RequestCompleted.decode(event.payload);
  } catch (err) {
    // The payload stays out of the log: opaque bytes that could hold anything.
    deps.log.error(
      { eventId: event.id, attempt: event.attempt, reason: err instanceof Error ? err.message : String(err) },
      "routing.health.event_undecodable",
    );
    deps.metrics?.consumed("undecodable");
    throw new Error("request.completed payload cannot be decoded", { cause: err });
  }
}

/**
 * A conversation's next turn can follow its answer within a fraction of a second, and it must find
 * the pin of the endpoint that served: this consumer gathers for less than the bus's default.
 */
export const PIN_BATCH_WAIT_MS = 50;

export function subscribeEndpointHealth(bus: EventBus, deps: HealthConsumerDeps): Promise<Subscription> {
  return bus.subscribe({
    topic: REQUEST_COMPLETED_TOPIC,
    group: CONSUMER_GROUP,
    handler: requestCompletedHandler(deps),
    batchHandler: requestsCompletedHandler(deps),
    batchWaitMs: PIN_BATCH_WAIT_MS,
  });
}
