import type { Db } from "@router/db";
import type { EventBus, IncomingEvent, Subscription } from "@router/bus";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { events } from "@router/proto";
import type { ActivityMetrics } from "../metrics";
import { recordRequest } from "./request-record";

export const REQUEST_COMPLETED_TOPIC = "router.request.completed.v1";
export const CONSUMER_GROUP = "activity";

export interface RecordingDeps {
  db: Db;
  log: Logger;
  clock: Clock;
  /** Counts each delivery by result; none when omitted. */
  metrics?: ActivityMetrics;
}

/** Thrown for an event this consumer can never store; the bus retries it, then dead-letters it. */
export class UnusableEventError extends Error {
  constructor(reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.name = "UnusableEventError";
  }
}

function decode(event: IncomingEvent, log: Logger): events.RequestCompleted {
  const where = { eventId: event.id, topic: event.topic, attempt: event.attempt };
  let decoded: events.RequestCompleted;
  try {
    decoded = events.RequestCompleted.decode(event.payload);
  } catch (err) {
    // The payload itself stays out of the log: it is opaque bytes and could hold anything.
    log.error({ ...where, reason: err instanceof Error ? err.message : String(err) }, "activity.event.undecodable");
    throw new UnusableEventError("request.completed payload cannot be decoded", { cause: err });
  }
  const missing = (["requestId", "orgId", "status"] as const).filter((f) => decoded[f] === "");
  if (missing.length > 0) {
    log.error({ ...where, missing }, "activity.event.undecodable");
    throw new UnusableEventError(`request.completed payload lacks ${missing.join(", ")}`);
  }
  return decoded;
}

/** The handler for one `router.request.completed.v1` delivery: decode, then store in one statement. */
export function requestCompletedHandler(deps: RecordingDeps): (event: IncomingEvent) => Promise<void> {
  return async (event) => {
    let completed: events.RequestCompleted;
    try {
      completed = decode(event, deps.log);
    } catch (err) {
      deps.metrics?.recorded("undecodable");
      throw err;
    }
    const isNew = await recordRequest(deps.db, completed, deps.clock.now());
    deps.metrics?.recorded(isNew ? "new" : "duplicate");
    deps.log.debug(
      { eventId: event.id, requestId: completed.requestId, orgId: completed.orgId, duplicate: !isNew },
      "activity.request.recorded",
    );
  };
}

export function subscribeRequestCompleted(bus: EventBus, deps: RecordingDeps): Promise<Subscription> {
  return bus.subscribe({
    topic: REQUEST_COMPLETED_TOPIC,
    group: CONSUMER_GROUP,
    handler: requestCompletedHandler(deps),
  });
}
