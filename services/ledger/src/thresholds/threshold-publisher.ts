import type { EventBus } from "@router/bus";
import type { Db } from "@router/db";
import type { Logger } from "@router/logging";
import { toNanos, type Clock, type WindowKind } from "@router/money";
import { events, TOPICS } from "@router/proto";

export interface ThresholdPublisherOptions {
  db: Db;
  bus: EventBus;
  clock: Clock;
  log: Logger;
  /** How often crossings waiting in the outbox are looked for. Default 500 ms. */
  pollMs?: number;
  /** A publisher that took crossings and died leaves them to another after this long. Default 30 s. */
  claimMs?: number;
}

interface CrossingRow {
  crossing_id: string;
  org_id: string;
  subject_kind: string;
  subject_id: string;
  subject_name: string;
  workspace_id: string;
  window_kind: WindowKind;
  window_start: Date | string;
  percent: number;
  previous_percent: number;
  hard: boolean;
  limit_nanodollars: string | number | bigint;
  usage_nanodollars: string | number | bigint;
  request_id: string;
  crossed_at: Date | string;
}

const BATCH = 100;
const DEFAULT_POLL_MS = 500;
const DEFAULT_CLAIM_MS = 30_000;

/** The `router.spend.threshold_crossed.v1` payload of one recorded crossing. */
export function thresholdCrossedEvent(r: CrossingRow): events.ThresholdCrossed {
  const agent = r.subject_kind === "agent";
  return {
    crossingId: r.crossing_id,
    orgId: r.org_id,
    subjectKind: r.subject_kind,
    // A key is named by its full hash; an agent by its name (its counter row is named within a scope).
    subject: agent ? r.subject_name : r.subject_id,
    keyName: agent ? "" : r.subject_name,
    workspaceId: agent ? r.workspace_id : "",
    window: r.window_kind,
    windowStartMs: r.window_kind === "lifetime" ? 0n : BigInt(new Date(r.window_start).getTime()),
    percent: r.percent,
    mode: r.hard ? "hard" : "soft",
    limitNanodollars: toNanos(r.limit_nanodollars),
    usageNanodollars: toNanos(r.usage_nanodollars),
    requestId: r.request_id,
    crossedAtMs: BigInt(new Date(r.crossed_at).getTime()),
    previousPercent: r.previous_percent,
  };
}

/**
 * Publishes the threshold crossings that settlements recorded (close_holds writes them to the
 * threshold_crossings outbox in the settlement's own transaction), off the settlement path: every
 * `pollMs` it takes what waits, publishes each (the bus answers once the broker has it or its own
 * durable outbox does) and marks it published. A crossing is taken for `claimMs` first, so replicas
 * share the work without holding a transaction open while publishing; one taken by a publisher that
 * died is published by another afterwards. Delivery is at least once; the event id is the
 * crossing id, on which consumers deduplicate.
 */
export class ThresholdPublisher {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly opts: ThresholdPublisherOptions) {}

  start(): void {
    this.schedule();
  }

  /** Publishes what waits now; resolves with how many were published. */
  async publishWaiting(): Promise<number> {
    let published = 0;
    for (;;) {
      const taken = await this.take();
      for (const row of taken) {
        const event = thresholdCrossedEvent(row);
        await this.opts.bus.publish({
          topic: TOPICS.thresholdCrossed,
          key: row.org_id,
          type: TOPICS.thresholdCrossed,
          id: row.crossing_id,
          payload: events.ThresholdCrossed.encode(event).finish(),
        });
        await this.opts.db.query("UPDATE threshold_crossings SET published_at = $2::timestamptz WHERE crossing_id = $1", [
          row.crossing_id,
          this.opts.clock.now().toISOString(),
        ]);
        published++;
      }
      if (taken.length < BATCH) return published;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private async take(): Promise<CrossingRow[]> {
    const now = this.opts.clock.now();
    const r = await this.opts.db.query<CrossingRow>(
      `UPDATE threshold_crossings t
       SET claimed_until = $2::timestamptz
       WHERE t.crossing_id IN (
         SELECT crossing_id FROM threshold_crossings
         WHERE published_at IS NULL AND (claimed_until IS NULL OR claimed_until <= $1::timestamptz)
         ORDER BY crossed_at, window_start, percent
         LIMIT ${BATCH}
         FOR UPDATE SKIP LOCKED
       )
       RETURNING t.crossing_id, t.org_id, t.subject_kind, t.subject_id, t.subject_name, t.workspace_id, t.window_kind,
                 t.window_start, t.percent, t.previous_percent, t.hard, t.limit_nanodollars, t.usage_nanodollars,
                 t.request_id, t.crossed_at`,
      [now.toISOString(), new Date(now.getTime() + (this.opts.claimMs ?? DEFAULT_CLAIM_MS)).toISOString()],
    );
    // In the order they were crossed, so one subject's events go out in order. Two settlements can
    // cross within one clock tick; within a subject's window the percentage only rises, so it breaks the tie.
    return r.rows.sort(
      (a, b) =>
        new Date(a.crossed_at).getTime() - new Date(b.crossed_at).getTime() ||
        new Date(a.window_start).getTime() - new Date(b.window_start).getTime() ||
        a.percent - b.percent,
    );
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.publishWaiting().then(
        (n) => {
          if (n > 0) this.opts.log.debug({ published: n }, "ledger.thresholds.published");
        },
        (err: unknown) => this.opts.log.warn({ err }, "ledger.thresholds.publish_failed"),
      );
      void this.running.then(() => this.schedule());
    }, this.opts.pollMs ?? DEFAULT_POLL_MS);
    // The poll alone must not keep a process alive.
    this.timer.unref();
  }
}
