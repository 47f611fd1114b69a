import { inSpan } from "@router/tracing";
import type { Db } from "@router/db";
import type { BatchHandler, EventBus, IncomingEvent, Subscription } from "@router/bus";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { events, TOPICS } from "@router/proto";
import type { ActivityMetrics } from "../metrics";
import { recordRequests } from "./request-record";

export const REQUEST_COMPLETED_TOPIC = TOPICS.requestCompleted;
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

/**
 * The handler for consecutive `router.request.completed.v1` deliveries: decode all, then store them
 * in one statement. One undecodable event fails the batch; the bus then retries each event alone,
 * so only that one dead-letters.
 */
export function requestsCompletedHandler(deps: RecordingDeps): BatchHandler {
  return async (delivered) => {
    const completed: events.RequestCompleted[] = [];
    for (const event of delivered) {
      try {
        completed.push(decode(event, deps.log));
      } catch (err) {
        deps.metrics?.recorded("undecodable");
        throw err;
      }
    }
    const fresh = await inSpan("activity.record", { attributes: { "activity.requests": completed.length } }, () =>
      recordRequests(deps.db, completed, deps.clock.now()),
    );
    completed.forEach((c, i) => {
      // A request twice in one batch was stored once: the first copy is the new one.
      const isNew = fresh.delete(c.requestId);
      deps.metrics?.recorded(isNew ? "new" : "duplicate");
      deps.log.debug(
        { eventId: delivered[i]?.id, requestId: c.requestId, orgId: c.orgId, duplicate: !isNew },
        "activity.request.recorded",
      );
    });
  };
}

/** The handler for one delivery: a batch of one. */
export function requestCompletedHandler(deps: RecordingDeps): (event: IncomingEvent) => Promise<void> {
  const handleBatch = requestsCompletedHandler(deps);
  return (event) => handleBatch([event]);
}

export function subscribeRequestCompleted(bus: EventBus, deps: RecordingDeps): Promise<Subscription> {
  return bus.subscribe({
    topic: REQUEST_COMPLETED_TOPIC,
    group: CONSUMER_GROUP,
    handler: requestCompletedHandler(deps),
    batchHandler: requestsCompletedHandler(deps),
  });
}
