import type { BatchHandler, EventBus, IncomingEvent, Subscription } from "@router/bus";
import type { Db } from "@router/db";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { eventViews, TOPICS } from "@router/proto";
import type { ReportsMetrics } from "../metrics";
import { countedRequest, type CountedRequest } from "./counted-request";
import { countRequests } from "./rollup-store";

export const REQUEST_COMPLETED_TOPIC = TOPICS.requestCompleted;
export const CONSUMER_GROUP = "reports";

export interface RollupDeps {
  db: Db;
  log: Logger;
  clock: Clock;
  /** Counts each delivery by result; none when omitted. */
  metrics?: ReportsMetrics;
}

/** An event the rollups can never use; thrown so the bus retries it and then dead-letters it. */
export class UnusableEventError extends Error {
  constructor(reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.name = "UnusableEventError";
  }
}

/**
 * Decodes what a rollup counts of a delivery (RequestCompletedRollup: the rest of the event is skipped,
 * not decoded); one that lacks a request id, an organisation or a status is unusable.
 */
function completedOf(event: IncomingEvent, log: Logger): eventViews.RequestCompletedRollup {
  const unusable = (reason: string, cause?: unknown): UnusableEventError => {
    // Never the payload itself: opaque bytes that could hold anything.
    log.error({ eventId: event.id, topic: event.topic, attempt: event.attempt, reason }, "reports.event.unusable");
    return new UnusableEventError(`request.completed ${reason}`, { cause });
  };
  let decoded: eventViews.RequestCompletedRollup;
  try {
    decoded = eventViews.RequestCompletedRollup.decode(event.payload);
  } catch (err) {
    throw unusable("payload cannot be decoded", err);
  }
  const lacking = (["requestId", "orgId", "status"] as const).filter((field) => decoded[field] === "");
  if (lacking.length > 0) throw unusable(`payload lacks ${lacking.join(", ")}`);
  return decoded;
}

/**
 * Handles consecutive `router.request.completed.v1` deliveries: decode all, then count them in one
 * statement. One unusable event fails the batch; the bus then retries each event alone, so only
 * that one dead-letters.
 */
export function rollupBatchHandler(deps: RollupDeps): BatchHandler {
  return async (delivered) => {
    const receivedAt = deps.clock.now();
    const countable: CountedRequest[] = [];
    let withoutWorkspace = 0;
    for (const event of delivered) {
      let completed: eventViews.RequestCompletedRollup;
      try {
        completed = completedOf(event, deps.log);
      } catch (err) {
        deps.metrics?.counted("undecodable");
        throw err;
      }
      const counted = countedRequest(completed, receivedAt);
      if (counted) countable.push(counted);
      else withoutWorkspace++;
    }
    const fresh = await countRequests(deps.db, countable, receivedAt);
    for (const c of countable) {
      // A request twice in one batch was counted once: its first copy is the new one.
      const isNew = fresh.delete(c.request_id);
      deps.metrics?.counted(isNew ? "counted" : "duplicate");
      deps.log.debug({ requestId: c.request_id, orgId: c.org_id, workspaceId: c.workspace_id, duplicate: !isNew }, "reports.request.counted");
    }
    if (withoutWorkspace > 0) deps.metrics?.counted("no_workspace", withoutWorkspace);
  };
}

/** The handler for one delivery: a batch of one. */
export function rollupHandler(deps: RollupDeps): (event: IncomingEvent) => Promise<void> {
  const handleBatch = rollupBatchHandler(deps);
  return (event) => handleBatch([event]);
}

export function subscribeRollups(bus: EventBus, deps: RollupDeps): Promise<Subscription> {
  return bus.subscribe({
    topic: REQUEST_COMPLETED_TOPIC,
    group: CONSUMER_GROUP,
    handler: rollupHandler(deps),
    batchHandler: rollupBatchHandler(deps),
  });
}
