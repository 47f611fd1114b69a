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

/** Thrown for an event this consumer can never use; the bus retries it, then dead-letters it. */
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
    // The payload stays out of the log: opaque bytes that could hold anything.
    log.error({ ...where, reason: err instanceof Error ? err.message : String(err) }, "broadcast.event.undecodable");
    throw new UnusableEventError("request.completed payload cannot be decoded", { cause: err });
  }
  const missing = (["requestId", "orgId", "status"] as const).filter((f) => decoded[f] === "");
  if (missing.length > 0) {
    log.error({ ...where, missing }, "broadcast.event.undecodable");
    throw new UnusableEventError(`request.completed payload lacks ${missing.join(", ")}`);
  }
  return decoded;
}

/**
 * The handler for consecutive `router.request.completed.v1` deliveries: decode all, claim the new
 * ones and read the organisations' active destinations in one transaction, then queue one delivery
 * per sampled destination. Queuing never waits for a receiver, so a slow one does not slow the
 * consumer (and the gateway never waits for either).
 */
export function requestsCompletedHandler(deps: ConsumerDeps): BatchHandler {
  return async (delivered) => {
    const completed: events.RequestCompleted[] = [];
    for (const event of delivered) {
      try {
        completed.push(decode(event, deps.log));
      } catch (err) {
        deps.metrics.consumed("undecodable");
        throw err;
      }
    }
    const refs = completed.map((c, i) => ({ eventId: delivered[i]?.id ?? "", requestId: c.requestId, orgId: c.orgId }));
    const { fresh, destinations } = await claimEvents(deps.db, refs, deps.clock.now());
    completed.forEach((c, i) => {
      // An event twice in one batch was claimed once: the first copy is the new one.
      const isNew = fresh.delete(refs[i]?.eventId ?? "");
      const targets = destinations.get(c.orgId) ?? [];
      if (targets.length === 0) {
        deps.metrics.consumed("no_destination");
        return;
      }
      deps.metrics.consumed(isNew ? "new" : "duplicate");
      if (!isNew) return;
      for (const destination of targets) {
        if (isSampled(c.requestId, destination.sample_rate)) deps.broadcaster.enqueue(destination, c);
        else deps.metrics.notSampled(destination.kind);
      }
    });
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
