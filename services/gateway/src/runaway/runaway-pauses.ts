import type { EventBus, IncomingEvent, Subscription } from "@router/bus";
import type { Queryable } from "@router/db";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { events, TOPICS } from "@router/proto";
import type { AuthCache } from "../auth/auth-cache";

/** One gateway replica handles each flag: the group is the service's name. */
export const RUNAWAY_CONSUMER_GROUP = "gateway";

export type FlagResult = "paused" | "unchanged" | "duplicate" | "alert";

export interface RunawayPauseDeps {
  db: Queryable;
  log: Logger;
  clock: Clock;
  authCache: AuthCache;
  onFlag?: (result: FlagResult) => void;
}

// One statement: the flag is recorded as applied, and only a flag not seen before pauses its key,
// when the key belongs to the flag's organisation, is not revoked and is not paused already (a key
// paused by hand stays `manual`; the product's pause rule pauses an active key only).
const APPLY_FLAG = `WITH applied AS (
  INSERT INTO runaway_pauses (flag_id, org_id, key_hash, applied_at) VALUES ($1, $2, $3, $4)
  ON CONFLICT (flag_id) DO NOTHING
  RETURNING flag_id
), paused AS (
  UPDATE keys SET paused = true, paused_reason = 'runaway', updated_at = $4
  WHERE hash = $3 AND org_id = $2 AND NOT disabled AND NOT paused AND EXISTS (SELECT 1 FROM applied)
  RETURNING hash
)
SELECT (SELECT count(*) FROM applied)::int AS applied, (SELECT count(*) FROM paused)::int AS paused`;

/** Applies one runaway flag to the key it names; see APPLY_FLAG. */
export async function applyRunawayFlag(q: Queryable, flag: events.RunawayFlagged, now: Date): Promise<FlagResult> {
  if (flag.action !== "paused" || flag.subjectKind !== "key" || flag.keyHash === "") return "alert";
  const r = await q.query<{ applied: number; paused: number }>(APPLY_FLAG, [flag.flagId, flag.orgId, flag.keyHash, now]);
  const row = r.rows[0];
  if (!row || row.applied === 0) return "duplicate";
  return row.paused > 0 ? "paused" : "unchanged";
}

/**
 * The handler for `router.spend.runaway_flagged.v1`: a flag whose action is `paused` pauses its key
 * (`paused_reason` `runaway`), and every replica drops the key from its auth cache at once, so each
 * refuses it with 403 `key_paused` within moments. Idempotent on the flag id (also the event id).
 */
export function runawayFlagHandler(deps: RunawayPauseDeps): (event: IncomingEvent) => Promise<void> {
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
    const result = await applyRunawayFlag(deps.db, flag, deps.clock.now());
    deps.onFlag?.(result);
    if (result === "paused") {
      await deps.authCache.evict([flag.keyHash]);
      deps.log.info({ flagId: flag.flagId, orgId: flag.orgId, keyPrefix: flag.subject }, "gateway.key.paused_by_runaway");
    }
  };
}

export function subscribeRunawayFlags(bus: EventBus, deps: RunawayPauseDeps): Promise<Subscription> {
  return bus.subscribe({ topic: TOPICS.runawayFlagged, group: RUNAWAY_CONSUMER_GROUP, handler: runawayFlagHandler(deps) });
}
