import type { EventBus, IncomingEvent, Subscription } from "@router/bus";
import type { Logger } from "@router/logging";
import { events, TOPICS } from "@router/proto";
import type { AuthCache } from "../auth/auth-cache";
import type { IdentityDirectory } from "../console/console-port";

/** One gateway replica handles each flag: the group is the service's name. */
export const RUNAWAY_CONSUMER_GROUP = "gateway";

export type FlagResult = "paused" | "unchanged" | "duplicate" | "alert";

export interface RunawayFlagDeps {
  /** The console, which owns the keys, pauses the key once per flag. */
  identity: Pick<IdentityDirectory, "applyRunawayFlag">;
  log: Logger;
  authCache: AuthCache;
  onFlag?: (result: FlagResult) => void;
}

/**
 * The handler for `router.spend.runaway_flagged.v1`: a flag whose action is `paused` pauses its key
 * (`paused_reason` `runaway`) at the console, and every replica drops the key from its auth cache
 * at once, so each refuses it with 403 `key_paused` within moments. Idempotent on the flag id (also
 * the event id). A console that cannot be reached fails the delivery, which the bus retries.
 */
export function runawayFlagHandler(deps: RunawayFlagDeps): (event: IncomingEvent) => Promise<void> {
  return async (event) => {
    let flag: events.RunawayFlagged;
    try {
      flag = events.RunawayFlagged.decode(event.payload);
    } catch (err) {
      deps.log.error({ eventId: event.id, attempt: event.attempt }, "gateway.runaway.undecodable");
      throw err;
    }
    if (flag.flagId === "" || flag.orgId === "") {
      deps.log.error({ eventId: event.id, attempt: event.attempt }, "gateway.runaway.undecodable");
      throw new Error("runaway_flagged payload lacks flag_id or org_id");
    }
    if (flag.action !== "paused" || flag.subjectKind !== "key" || flag.keyHash === "") {
      deps.onFlag?.("alert");
      return;
    }
    const result = await deps.identity.applyRunawayFlag({ flagId: flag.flagId, orgId: flag.orgId, keyHash: flag.keyHash });
    deps.onFlag?.(result);
    if (result === "paused") {
      await deps.authCache.evict([flag.keyHash]);
      deps.log.info({ flagId: flag.flagId, orgId: flag.orgId, keyPrefix: flag.subject }, "gateway.key.paused_by_runaway");
    }
  };
}

export function subscribeRunawayFlags(bus: EventBus, deps: RunawayFlagDeps): Promise<Subscription> {
  return bus.subscribe({ topic: TOPICS.runawayFlagged, group: RUNAWAY_CONSUMER_GROUP, handler: runawayFlagHandler(deps) });
}
