import fastq from "fastq";
import type { Db } from "@router/db";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import type { DeliveryOutcome, Outbound, OutboundMessage } from "@router/outbound";
import type { events } from "@router/proto";
import type { DestinationSecrets } from "../destinations/destination-secrets";
import { recordAttempt, type DestinationRow } from "../destinations/destination-store";
import type { BroadcastMetrics } from "../metrics";
import { webhookBody } from "../records/request-record";
import { otlpTraceBody } from "../records/request-span";

export interface BroadcasterDeps {
  db: Db;
  secrets: DestinationSecrets;
  /** Safe delivery to external targets (address checks, retries, bounded queue). */
  outbound: Pick<Outbound, "deliver">;
  clock: Clock;
  log: Logger;
  metrics: BroadcastMetrics;
  /** Deliveries in flight at once to one destination. Default 2. */
  perDestinationConcurrency?: number;
  /** Deliveries waiting for one destination; past it they are skipped. Default 100. */
  perDestinationQueueLimit?: number;
}

interface Job {
  destination: DestinationRow;
  event: events.RequestCompleted;
}

interface Options {
  /** The test operation's synthetic record, marked as such in the body. */
  test: boolean;
}

/**
 * Turns one completed request into what a destination receives (a signed webhook record or an
 * OTLP span with the destination's header), hands it to the outbound queue, and records how it
 * ended on the destination.
 */
export class Broadcaster {
  /**
   * One small queue per destination in front of the shared outbound queue, so a receiver that
   * hangs holds at most its own few slots and other destinations keep being served. A lane is
   * dropped once it is empty.
   */
  private readonly lanes = new Map<string, fastq.queueAsPromised<Job, void>>();
  private readonly concurrency: number;
  private readonly queueLimit: number;
  /** Destinations whose lane overflowed since it was last empty (warned about once). */
  private readonly backlogged = new Set<string>();

  constructor(private readonly deps: BroadcasterDeps) {
    this.concurrency = deps.perDestinationConcurrency ?? 2;
    this.queueLimit = deps.perDestinationQueueLimit ?? 100;
  }

  /**
   * Queues the delivery and returns at once: the caller (the event consumer) never waits for a
   * receiver. The outcome is recorded on the destination when the delivery ends. A destination
   * whose lane is full (its receiver is far behind) skips the delivery: counted, not recorded on
   * the row, whose last error already says why the receiver is behind.
   */
  enqueue(destination: DestinationRow, event: events.RequestCompleted): void {
    const lane = this.laneOf(destination.id);
    if (lane.length() >= this.queueLimit) {
      this.deps.metrics.delivered(destination.kind, { status: "skipped", httpStatus: null, error: null, attempts: 0, durationMs: 0 });
      // Once per backlog, not once per skipped request: a dead receiver would flood the log.
      if (!this.backlogged.has(destination.id)) {
        this.backlogged.add(destination.id);
        this.deps.log.warn({ destinationId: destination.id, waiting: lane.length() }, "broadcast.delivery.lane_full");
      }
      return;
    }
    // Not awaited on purpose (the consumer never waits for a receiver); the catch handles its failure.
    void lane.push({ destination, event }).catch((err: unknown) => {
      this.deps.log.error({ err, destinationId: destination.id }, "broadcast.delivery.record_failed");
    });
  }

  /** Delivers now and answers with the outcome (the test operation); recorded like any delivery. */
  async sendNow(destination: DestinationRow, event: events.RequestCompleted): Promise<DeliveryOutcome> {
    return this.send(destination, event, { test: true });
  }

  /** Deliveries waiting in the destinations' lanes. */
  waiting(): number {
    let n = 0;
    for (const lane of this.lanes.values()) n += lane.length();
    return n;
  }

  /** Resolves once every queued delivery has ended and been recorded (shutdown, tests). */
  async idle(): Promise<void> {
    for (;;) {
      for (const [id, lane] of this.lanes) if (lane.idle()) this.lanes.delete(id);
      if (this.lanes.size === 0) return;
      await Promise.all([...this.lanes.values()].map((lane) => lane.drained()));
    }
  }

  private laneOf(destinationId: string): fastq.queueAsPromised<Job, void> {
    let lane = this.lanes.get(destinationId);
    if (!lane) {
      const created = fastq.promise(async (job: Job) => {
        await this.send(job.destination, job.event, { test: false });
      }, this.concurrency);
      created.drain = () => {
        if (this.lanes.get(destinationId) === created) this.lanes.delete(destinationId);
        this.backlogged.delete(destinationId);
      };
      this.lanes.set(destinationId, created);
      lane = created;
    }
    return lane;
  }

  private async send(destination: DestinationRow, event: events.RequestCompleted, opts: Options): Promise<DeliveryOutcome> {
    const attemptedAt = this.deps.clock.now();
    const message = this.messageFor(destination, event, opts);
    const outcome = "error" in message ? unopenable(message.error) : await this.deps.outbound.deliver(message);
    this.deps.metrics.delivered(destination.kind, outcome);
    // A delivery never attempted (the shared queue full, the service stopping) says nothing about
    // the receiver: counted, not written over what the last real attempt found.
    if (outcome.status !== "skipped") {
      await recordAttempt(this.deps.db, destination.id, {
        attemptedAt,
        succeeded: outcome.status === "sent",
        httpStatus: outcome.httpStatus,
        error: outcome.error,
      });
    }
    this.deps.log.debug(
      { destinationId: destination.id, kind: destination.kind, requestId: event.requestId, status: outcome.status, httpStatus: outcome.httpStatus },
      "broadcast.delivery.finished",
    );
    return outcome;
  }

  private messageFor(d: DestinationRow, event: events.RequestCompleted, opts: Options): OutboundMessage | { error: string } {
    const where = { orgId: d.org_id, destinationId: d.id };
    try {
      if (d.kind === "webhook") {
        if (!d.signing_secret_sealed) return { error: "the destination has no signing secret" };
        const signingSecret = this.deps.secrets.open(d.signing_secret_sealed, { ...where, slot: "signing_secret" });
        return { url: d.url, body: webhookBody(event, opts), signingSecret };
      }
      const headers: Record<string, string> = {};
      if (d.header_name !== null && d.header_value_sealed !== null) {
        headers[d.header_name] = this.deps.secrets.open(d.header_value_sealed, { ...where, slot: "header_value" });
      }
      return { url: d.url, body: otlpTraceBody(event, opts), contentType: "application/json", headers };
    } catch (err) {
      // A row sealed under another master key (or altered) cannot be delivered; the cause stays in the log.
      this.deps.log.error({ err, destinationId: d.id }, "broadcast.destination.secret_unopenable");
      return { error: "the destination's stored secret cannot be opened (was ROUTER_MASTER_KEY changed?)" };
    }
  }
}

function unopenable(error: string): DeliveryOutcome {
  return { status: "failed", httpStatus: null, error, attempts: 0, durationMs: 0 };
}
