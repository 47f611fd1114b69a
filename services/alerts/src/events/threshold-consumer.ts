import type { EventBus, IncomingEvent, Subscription } from "@router/bus";
import { toUsd } from "@router/money";
import { events, TOPICS } from "@router/proto";
import { listChannels, type ChannelRecord } from "../channels/channel-store";
import type { Alert } from "../sending/alert";
import { CONSUMER_GROUP, type ConsumerDeps } from "./consumer-deps";
import { decodeOrThrow } from "./decoding";
import { claimEvent } from "./handled-events";
import { thresholdToAnnounce } from "./threshold-matching";

const WINDOWS = ["daily", "weekly", "monthly", "lifetime"];

function problemOf(e: events.ThresholdCrossed): string | null {
  const missing = (["crossingId", "orgId", "subject"] as const).filter((f) => e[f] === "");
  if (missing.length > 0) return `lacks ${missing.join(", ")}`;
  if (e.subjectKind !== "key" && e.subjectKind !== "agent") return "has an unknown subject_kind";
  if (!WINDOWS.includes(e.window)) return "has an unknown window";
  if (e.percent < 1 || e.percent > 100 || e.previousPercent < 0 || e.previousPercent >= e.percent) return "has percentages out of range";
  return null;
}

/** The announcement of `threshold` for one crossing (metadata only; the full key hash identifies the key). */
export function thresholdAlert(e: events.ThresholdCrossed, threshold: number): Alert {
  const isKey = e.subjectKind === "key";
  const limitUsd = toUsd(e.limitNanodollars);
  const usageUsd = toUsd(e.usageNanodollars);
  const windowStart = e.window === "lifetime" ? null : new Date(Number(e.windowStartMs)).toISOString();
  const who = isKey ? `key "${e.keyName || e.subject.slice(0, 12)}"` : `agent "${e.subject}"`;
  const what = isKey ? "limit" : "budget";
  return {
    event: isKey ? "key_limit.threshold" : "agent_limit.threshold",
    orgId: e.orgId,
    threshold,
    keyName: isKey ? e.keyName || null : null,
    keyHashPrefix: isKey ? e.subject.slice(0, 12) : null,
    agentTag: isKey ? null : e.subject,
    data: {
      threshold,
      percent: e.percent,
      subject_kind: e.subjectKind,
      ...(isKey
        ? { key: { name: e.keyName || null, hash: e.subject } }
        : { agent: { name: e.subject, workspace_id: e.workspaceId || null } }),
      window: e.window,
      window_start: windowStart,
      mode: e.mode,
      limit_usd: limitUsd,
      usage_usd: usageUsd,
      request_id: e.requestId || null,
      crossed_at: new Date(Number(e.crossedAtMs)).toISOString(),
    },
    summary: `${who} reached ${threshold}% of its ${e.window} ${e.mode} ${what} (${usageUsd} of ${limitUsd} USD).`,
  };
}

/**
 * Handles one `router.spend.threshold_crossed.v1`: for each channel of the organisation, the
 * highest of its thresholds that this crossing passed is claimed for the subject's window (once
 * per channel, subject, window and threshold) in the same transaction that records the event as
 * handled; the claimed announcements are then sent in the background.
 */
export function thresholdCrossedHandler(deps: ConsumerDeps): (event: IncomingEvent) => Promise<void> {
  return async (event) => {
    let crossing: events.ThresholdCrossed;
    try {
      crossing = decodeOrThrow(event, (b) => events.ThresholdCrossed.decode(b), problemOf, deps.log);
    } catch (err) {
      deps.metrics.consumedEvent(TOPICS.thresholdCrossed, "undecodable");
      throw err;
    }
    const now = deps.clock.now();
    const claimed = await deps.db.tx(async (q) => {
      if (!(await claimEvent(q, event.id, `threshold_crossed:${crossing.crossingId}`, TOPICS.thresholdCrossed, now))) return null;
      const announce: [ChannelRecord, number][] = [];
      for (const channel of await listChannels(q, crossing.orgId)) {
        if (channel.disabled) continue;
        const threshold = thresholdToAnnounce(channel.thresholds, crossing.previousPercent, crossing.percent);
        if (threshold === null) continue;
        const r = await q.query(
          `INSERT INTO threshold_announcements
             (channel_id, subject_kind, subject, workspace_id, window_name, window_start, threshold, crossing_id, announced_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
          [
            channel.id,
            crossing.subjectKind,
            crossing.subject,
            crossing.workspaceId,
            crossing.window,
            new Date(Number(crossing.windowStartMs)),
            threshold,
            crossing.crossingId,
            now,
          ],
        );
        if (r.rowCount > 0) announce.push([channel, threshold]);
      }
      return announce;
    });
    deps.metrics.consumedEvent(TOPICS.thresholdCrossed, claimed === null ? "duplicate" : "new");
    deps.log.debug({ eventId: event.id, crossingId: crossing.crossingId, announcements: claimed?.length ?? 0 }, "alerts.threshold.handled");
    for (const [channel, threshold] of claimed ?? []) deps.sender.dispatch(channel, thresholdAlert(crossing, threshold));
  };
}

export function subscribeThresholdCrossed(bus: EventBus, deps: ConsumerDeps): Promise<Subscription> {
  return bus.subscribe({ topic: TOPICS.thresholdCrossed, group: CONSUMER_GROUP, handler: thresholdCrossedHandler(deps) });
}
