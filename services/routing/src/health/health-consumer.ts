import type { EventBus, IncomingEvent, Subscription } from "@router/bus";
import type { Db } from "@router/db";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { events } from "@router/proto";
import type { RoutingMetrics } from "../metrics";
import { healthIncrements } from "./health-increments";
import { recordHealth } from "./health-store";

export const REQUEST_COMPLETED_TOPIC = "router.request.completed.v1";
/** Consumer group = service name: every routing replica shares one group. */
export const CONSUMER_GROUP = "routing";

export interface HealthConsumerDeps {
  db: Db;
  log: Logger;
  clock: Clock;
  /** Counts each delivery by result; none when omitted. */
  metrics?: RoutingMetrics;
}

/**
 * The handler for one `router.request.completed.v1` delivery: its attempts become bucket counts,
 * recorded with the event id in one statement. An undecodable payload throws, so the bus retries
 * it and then moves it to the dead-letter topic.
 */
export function requestCompletedHandler(deps: HealthConsumerDeps): (event: IncomingEvent) => Promise<void> {
  return async (event) => {
    let completed: events.RequestCompleted;
    try {
      completed = events.RequestCompleted.decode(event.payload);
    } catch (err) {
      // The payload stays out of the log: opaque bytes that could hold anything.
      deps.log.error(
        { eventId: event.id, attempt: event.attempt, reason: err instanceof Error ? err.message : String(err) },
        "routing.health.event_undecodable",
      );
      deps.metrics?.consumed("undecodable");
      throw new Error("request.completed payload cannot be decoded", { cause: err });
    }
    const now = deps.clock.now();
    const increments = healthIncrements(completed, now);
    const counted = await recordHealth(deps.db, event.id, increments, now);
    deps.metrics?.consumed(counted ? "recorded" : "duplicate");
    deps.log.debug(
      { eventId: event.id, requestId: completed.requestId, endpoints: increments.length, duplicate: !counted },
      "routing.health.event_recorded",
    );
  };
}

export function subscribeEndpointHealth(bus: EventBus, deps: HealthConsumerDeps): Promise<Subscription> {
  return bus.subscribe({ topic: REQUEST_COMPLETED_TOPIC, group: CONSUMER_GROUP, handler: requestCompletedHandler(deps) });
}
