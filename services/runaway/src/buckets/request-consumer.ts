import type { BatchHandler, EventBus, IncomingEvent, Subscription } from "@router/bus";
import type { Db } from "@router/db";
import type { Logger } from "@router/logging";
import { toNanos, type Clock } from "@router/money";
import { eventViews, TOPICS } from "@router/proto";
import type { RunawayMetrics } from "../metrics";
import { BUCKET_RETENTION_MS } from "../sweep/runaway-rule";
import { countRequests, type CountedRequest } from "./bucket-store";

export const REQUEST_COMPLETED_TOPIC = TOPICS.requestCompleted;
export const CONSUMER_GROUP = "runaway";

export interface RequestConsumerDeps {
  db: Db;
  log: Logger;
  clock: Clock;
  metrics?: RunawayMetrics;
}

/**
 * Decodes what the rule needs (RequestCompletedSpend: the rest of the event is skipped, not decoded);
 * throws for an event that can never be counted (the bus retries it, then dead-letters it).
 */
function decode(event: IncomingEvent, log: Logger): CountedRequest {
  const where = { eventId: event.id, topic: event.topic, attempt: event.attempt };
  let e: eventViews.RequestCompletedSpend;
  try {
    e = eventViews.RequestCompletedSpend.decode(event.payload);
  } catch (err) {
    // The payload stays out of the log: opaque bytes that could hold anything.
    log.error({ ...where, reason: err instanceof Error ? err.message : String(err) }, "runaway.event.undecodable");
    throw new Error("request.completed payload cannot be decoded", { cause: err });
  }
  const missing = (["requestId", "orgId"] as const).filter((f) => e[f] === "");
  if (missing.length > 0) {
    log.error({ ...where, missing }, "runaway.event.undecodable");
    throw new Error(`request.completed payload lacks ${missing.join(", ")}`);
  }
  return {
    requestId: e.requestId,
    orgId: e.orgId,
    keyHash: e.keyHash,
    keyName: e.keyName,
    agent: e.agent,
    createdAt: new Date(Number(e.createdAtMs)),
    listCostNanos: toNanos(e.listCostNanodollars),
  };
}

/**
 * The handler for consecutive `router.request.completed.v1` deliveries: decode all, then count the
 * batch in one statement. A request older than the buckets are kept is left out (it can no longer
 * be in any window or usual span, and its id would no longer be remembered). One undecodable event
 * fails the batch; the bus then retries each event alone, so only that one dead-letters.
 */
export function requestsCompletedHandler(deps: RequestConsumerDeps): BatchHandler {
  return async (delivered) => {
    const decoded: CountedRequest[] = [];
    for (const event of delivered) {
      try {
        decoded.push(decode(event, deps.log));
      } catch (err) {
        deps.metrics?.consumed("undecodable");
        throw err;
      }
    }
    const oldest = deps.clock.now().getTime() - BUCKET_RETENTION_MS;
    const recent = decoded.filter((r) => r.createdAt.getTime() >= oldest);
    const fresh = await countRequests(deps.db, recent);
    for (const r of decoded) {
      if (r.createdAt.getTime() < oldest) deps.metrics?.consumed("stale");
      // A request twice in one batch counted once: the first copy is the new one.
      else deps.metrics?.consumed(fresh.delete(r.requestId) ? "counted" : "duplicate");
    }
  };
}

/** The handler for one delivery: a batch of one. */
export function requestCompletedHandler(deps: RequestConsumerDeps): (event: IncomingEvent) => Promise<void> {
  const handleBatch = requestsCompletedHandler(deps);
  return (event) => handleBatch([event]);
}

export function subscribeRequestCompleted(bus: EventBus, deps: RequestConsumerDeps): Promise<Subscription> {
  return bus.subscribe({
    topic: REQUEST_COMPLETED_TOPIC,
    group: CONSUMER_GROUP,
    handler: requestCompletedHandler(deps),
    batchHandler: requestsCompletedHandler(deps),
  });
}
