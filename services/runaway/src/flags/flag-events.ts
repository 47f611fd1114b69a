import type { EventBus } from "@router/bus";
import { events, TOPICS } from "@router/proto";
import type { Flag } from "./flag-store";

export const RUNAWAY_FLAGGED_TOPIC = TOPICS.runawayFlagged;

/** The `router.spend.runaway_flagged.v1` payload of a flag. */
export function flaggedEvent(flag: Flag): events.RunawayFlagged {
  return events.RunawayFlagged.fromPartial({
    flagId: flag.id,
    orgId: flag.orgId,
    subjectKind: flag.subjectKind,
    subject: flag.subject,
    keyHash: flag.keyHash ?? "",
    keyName: flag.keyName ?? "",
    action: flag.action,
    kind: flag.kind,
    windowStartMs: BigInt(flag.windowStart.getTime()),
    windowEndMs: BigInt(flag.windowEnd.getTime()),
    spendNanodollars: flag.spendNanos,
    usualSpendNanodollars: flag.usualSpendNanos,
    requests: flag.requests,
    usualRequests: flag.usualRequests,
    createdAtMs: BigInt(flag.createdAt.getTime()),
  });
}

/**
 * Publishes a flag, keyed by its organisation. The event id is the flag id, so a flag sent twice (a
 * retry after an unacknowledged publish) is one event to every consumer.
 */
export function publishFlag(bus: EventBus, flag: Flag): Promise<void> {
  return bus.publish({
    topic: RUNAWAY_FLAGGED_TOPIC,
    key: flag.orgId,
    type: RUNAWAY_FLAGGED_TOPIC,
    id: flag.id,
    payload: events.RunawayFlagged.encode(flaggedEvent(flag)).finish(),
  });
}
