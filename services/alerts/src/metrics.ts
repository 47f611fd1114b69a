import { Counter, Gauge, type Registry } from "prom-client";
import { createMetricsRegistry } from "@router/http-kit";

/** How one consumed event ended: acted on (`new`), seen before (`duplicate`) or `undecodable`. */
export type ConsumedResult = "new" | "duplicate" | "undecodable";

/** Every series the alerts service exports, on a registry of its own per instance. */
export class AlertsMetrics {
  readonly registry: Registry;
  private readonly deliveries: Counter<"event" | "status">;
  private readonly consumed: Counter<"topic" | "result">;
  readonly outboundQueued: Gauge;

  constructor(opts: { defaultMetrics?: boolean; queued?: () => number } = {}) {
    this.registry = createMetricsRegistry("alerts", opts);
    this.deliveries = new Counter({
      name: "alerts_deliveries_total",
      help: "Alert deliveries recorded, by event (key_limit.threshold, agent_limit.threshold, spend.runaway, test) and status (sent, failed, skipped).",
      labelNames: ["event", "status"],
      registers: [this.registry],
    });
    this.consumed = new Counter({
      name: "alerts_events_consumed_total",
      help: "Bus deliveries handled by the alerts consumers, by topic and result: new, duplicate or undecodable.",
      labelNames: ["topic", "result"],
      registers: [this.registry],
    });
    const queued = opts.queued;
    this.outboundQueued = new Gauge({
      name: "alerts_outbound_queued",
      help: "Deliveries waiting for an outbound slot.",
      registers: [this.registry],
      collect() {
        if (queued) this.set(queued());
      },
    });
  }

  delivered(event: string, status: string): void {
    this.deliveries.inc({ event, status });
  }

  consumedEvent(topic: string, result: ConsumedResult): void {
    this.consumed.inc({ topic, result });
  }
}
