import type { EventBus, IncomingEvent, Subscription } from "@router/bus";
import { toUsd } from "@router/money";
import { events, TOPICS } from "@router/proto";
import { listChannels } from "../channels/channel-store";
import type { Alert } from "../sending/alert";
import { CONSUMER_GROUP, type ConsumerDeps } from "./consumer-deps";
import { decodeOrThrow } from "./decoding";
import { claimEvent } from "./handled-events";

function problemOf(e: events.RunawayFlagged): string | null {
  const missing = (["flagId", "orgId", "subject"] as const).filter((f) => e[f] === "");
  if (missing.length > 0) return `lacks ${missing.join(", ")}`;
  if (e.subjectKind !== "key" && e.subjectKind !== "agent") return "has an unknown subject_kind";
  return null;
}

/** The `spend.runaway` announcement of one flag (metadata only). */
export function runawayAlert(f: events.RunawayFlagged): Alert {
  const isKey = f.subjectKind === "key";
  const spendUsd = toUsd(f.spendNanodollars);
  const usualUsd = toUsd(f.usualSpendNanodollars);
  const who = isKey ? `key "${f.keyName || f.subject}"` : `agent "${f.subject}"`;
  const measure =
    f.kind === "rate"
      ? `made ${f.requests} requests in 15 minutes (usually ${f.usualRequests.toFixed(1)})`
      : `spent ${spendUsd} USD in 15 minutes (usually ${usualUsd} USD)`;
  return {
    event: "spend.runaway",
    orgId: f.orgId,
    threshold: null,
    keyName: isKey ? f.keyName || null : null,
    keyHashPrefix: isKey ? (f.keyHash || f.subject).slice(0, 12) : null,
    agentTag: isKey ? null : f.subject,
    data: {
      flag_id: f.flagId,
      subject_kind: f.subjectKind,
      ...(isKey ? { key: { name: f.keyName || null, hash: f.keyHash || null } } : { agent: { name: f.subject } }),
      kind: f.kind,
      action: f.action,
      window_start: new Date(Number(f.windowStartMs)).toISOString(),
      window_end: new Date(Number(f.windowEndMs)).toISOString(),
      spend_usd: spendUsd,
      usual_spend_usd: usualUsd,
      requests: Number(f.requests),
      usual_requests: f.usualRequests,
      flagged_at: new Date(Number(f.createdAtMs)).toISOString(),
    },
    summary: `runaway ${f.kind === "rate" ? "requests" : "spend"}: ${who} ${measure}${f.action === "paused" ? "; the key is paused" : ""}.`,
  };
}

/**
 * Handles one `router.spend.runaway_flagged.v1`: every channel of the organisation gets the
 * `spend.runaway` announcement, once per flag (the flag id and the event id are recorded in one
 * transaction before anything is sent).
 */
export function runawayFlaggedHandler(deps: ConsumerDeps): (event: IncomingEvent) => Promise<void> {
  return async (event) => {
    let flag: events.RunawayFlagged;
    try {
      flag = decodeOrThrow(event, (b) => events.RunawayFlagged.decode(b), problemOf, deps.log);
    } catch (err) {
      deps.metrics.consumedEvent(TOPICS.runawayFlagged, "undecodable");
      throw err;
    }
    const channels = await deps.db.tx(async (q) => {
      if (!(await claimEvent(q, event.id, `runaway_flagged:${flag.flagId}`, TOPICS.runawayFlagged, deps.clock.now()))) return null;
      return (await listChannels(q, flag.orgId)).filter((c) => !c.disabled);
    });
    deps.metrics.consumedEvent(TOPICS.runawayFlagged, channels === null ? "duplicate" : "new");
    if (channels === null) return;
    const alert = runawayAlert(flag);
    for (const channel of channels) deps.sender.dispatch(channel, alert);
  };
}

export function subscribeRunawayFlagged(bus: EventBus, deps: ConsumerDeps): Promise<Subscription> {
  return bus.subscribe({ topic: TOPICS.runawayFlagged, group: CONSUMER_GROUP, handler: runawayFlaggedHandler(deps) });
}
