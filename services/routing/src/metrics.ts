import { Counter, Histogram, type Registry } from "prom-client";
import { createMetricsRegistry } from "@router/http-kit";

/** How one `router.request.completed.v1` delivery ended for the endpoint-health consumer. */
export type ConsumedResult = "recorded" | "duplicate" | "undecodable";

// Plan runs over in-memory snapshots: well under a millisecond unless defaults must be loaded.
const PLAN_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5];

/** Every series the routing service exports, on a registry of its own per instance. */
export class RoutingMetrics {
  readonly registry: Registry;
  readonly planDuration: Histogram;
  private readonly eventsConsumed: Counter<"result">;

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    this.registry = createMetricsRegistry("routing", opts);
    const registers = [this.registry];
    this.planDuration = new Histogram({
      name: "routing_plan_duration_seconds",
      help: "Time to answer one Plan call (refusals included).",
      buckets: PLAN_BUCKETS,
      registers,
    });
    this.eventsConsumed = new Counter({
      name: "routing_events_consumed_total",
      help: "Completed-request events consumed into endpoint health: recorded, duplicate or undecodable.",
      labelNames: ["result"],
      registers,
    });
  }

  consumed(result: ConsumedResult): void {
    this.eventsConsumed.inc({ result });
  }
}
