import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { createMetricsRegistry } from "@router/http-kit";
import type { DeliveryOutcome, OutboundStats } from "@router/outbound";
import type { DestinationKind } from "./destinations/destination-store";

/** How one `router.request.completed.v1` delivery ended for the consumer. */
export type ConsumedResult = "new" | "duplicate" | "no_destination" | "undecodable";

/** Every series the broadcast service exports, on a registry of its own per instance. */
export class BroadcastMetrics {
  readonly registry: Registry;
  private readonly eventsConsumed: Counter<"result">;
  private readonly sampledOut: Counter<"kind">;
  private readonly deliveries: Counter<"kind" | "status">;
  private readonly deliverySeconds: Histogram<"kind">;

  constructor(opts: { defaultMetrics?: boolean; queueStats?: () => OutboundStats } = {}) {
    this.registry = createMetricsRegistry("broadcast", opts);
    this.eventsConsumed = new Counter({
      name: "broadcast_events_consumed_total",
      help: "Completed-request events by result: new (fanned out), duplicate (already handled), no_destination (the organisation has no active destination) or undecodable.",
      labelNames: ["result"],
      registers: [this.registry],
    });
    this.sampledOut = new Counter({
      name: "broadcast_records_sampled_out_total",
      help: "Requests an active destination did not receive because of its sample rate, by destination kind.",
      labelNames: ["kind"],
      registers: [this.registry],
    });
    this.deliveries = new Counter({
      name: "broadcast_deliveries_total",
      help: "Deliveries by destination kind and status: sent (2xx), failed (after retries) or skipped (queue full, stopping).",
      labelNames: ["kind", "status"],
      registers: [this.registry],
    });
    this.deliverySeconds = new Histogram({
      name: "broadcast_delivery_duration_seconds",
      help: "From the first attempt to the outcome (retries included), by destination kind.",
      labelNames: ["kind"],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [this.registry],
    });
    const stats = opts.queueStats;
    if (stats) {
      new Gauge({
        name: "broadcast_queue_depth",
        help: "Deliveries waiting: in the per-destination lanes and the shared outbound queue.",
        registers: [this.registry],
        collect() {
          this.set(stats().queued);
        },
      });
      new Gauge({
        name: "broadcast_deliveries_in_flight",
        help: "Deliveries being attempted right now.",
        registers: [this.registry],
        collect() {
          this.set(stats().running);
        },
      });
    }
  }

  consumed(result: ConsumedResult, count = 1): void {
    this.eventsConsumed.inc({ result }, count);
  }

  notSampled(kind: DestinationKind): void {
    this.sampledOut.inc({ kind });
  }

  delivered(kind: DestinationKind, outcome: DeliveryOutcome): void {
    this.deliveries.inc({ kind, status: outcome.status });
    if (outcome.status !== "skipped") this.deliverySeconds.observe({ kind }, outcome.durationMs / 1000);
  }
}
