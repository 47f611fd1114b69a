import type { BatchHandler, EventBus, IncomingEvent, Subscription } from "@router/bus";
import type { Db } from "@router/db";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { eventViews, TOPICS } from "@router/proto";
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
  /** Told of every sticky request consumed, so the consumer gathers briefly while they flow. */
  stickyTraffic?: StickyTraffic;
}

/** While sticky requests flow, batches gather for this long: a conversation's next turn must find its pin. */
export const PIN_BATCH_WAIT_MS = 50;
/** How long after the last sticky request the consumer still gathers briefly. */
const STICKY_TRAFFIC_MS = 60_000;

/**
 * Whether sticky requests flow: a conversation's next turn can follow its answer within a fraction
 * of a second and must find the pin of the endpoint that served, so while they do (one consumed in
 * the last minute) the consumer gathers for `PIN_BATCH_WAIT_MS`; otherwise for the bus's default,
 * fewer and larger batches (the first sticky request after a quiet minute waits that long for its pin).
 */
export class StickyTraffic {
  private lastSeenAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly clock: Clock) {}

  seen(): void {
    this.lastSeenAt = this.clock.now().getTime();
  }

  /** The consumer's batch wait now: brief while sticky requests flow, else the bus's (undefined). */
  readonly batchWaitMs = (): number | undefined =>
    this.clock.now().getTime() - this.lastSeenAt < STICKY_TRAFFIC_MS ? PIN_BATCH_WAIT_MS : undefined;
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
    if (deps.pins) await recordPins(deps.pins, decoded.map((d) => d.completed), deps.log, deps.stickyTraffic);
    for (const { eventId, increments } of batch) {
      const duplicate = !counted.has(eventId);
      deps.metrics?.consumed(duplicate ? "duplicate" : "recorded");
      deps.log.debug({ eventId, endpoints: increments.length, duplicate }, "routing.health.event_recorded");
    }
  };
}

async function recordPins(pins: PinStore, completed: eventViews.RequestCompletedHealth[], log: Logger, traffic?: StickyTraffic): Promise<void> {
  for (const c of completed) {
    const pin = pinOfServed(c);
    if (!pin) continue;
    traffic?.seen();
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

/** The event's reading with what routing uses (the rest of the payload is skipped, not decoded). */
function decode(event: IncomingEvent, deps: HealthConsumerDeps): eventViews.RequestCompletedHealth {
  try {
    return eventViews.RequestCompletedHealth.decode(event.payload);
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

export function subscribeEndpointHealth(bus: EventBus, deps: HealthConsumerDeps): Promise<Subscription> {
  const stickyTraffic = deps.stickyTraffic ?? new StickyTraffic(deps.clock);
  const withTraffic = { ...deps, stickyTraffic };
  return bus.subscribe({
    topic: REQUEST_COMPLETED_TOPIC,
    group: CONSUMER_GROUP,
    handler: requestCompletedHandler(withTraffic),
    batchHandler: requestsCompletedHandler(withTraffic),
    batchWaitMs: stickyTraffic.batchWaitMs,
  });
}
