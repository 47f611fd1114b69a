import { Counter, Histogram, type Registry } from "prom-client";
import { createMetricsRegistry } from "@router/http-kit";

/** How one `router.request.completed.v1` delivery ended for the bucket counter. */
export type ConsumedResult = "counted" | "duplicate" | "stale" | "undecodable";

/** How one sweep ended. */
export type SweepResult = "ok" | "failed";

/** Every series the runaway service exports, on a registry of its own per instance. */
export class RunawayMetrics {
  readonly registry: Registry;
  private readonly consumedEvents: Counter<"result">;
  private readonly sweeps: Counter<"result">;
  private readonly sweepSeconds: Histogram;
  private readonly flags: Counter<"subject_kind" | "kind" | "action">;
  private readonly publishes: Counter<"result">;

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    this.registry = createMetricsRegistry("runaway", opts);
    this.consumedEvents = new Counter({
      name: "runaway_events_consumed_total",
      help: "Completed-request deliveries by result: counted, duplicate (counted before), stale (older than the buckets are kept) or undecodable.",
      labelNames: ["result"],
      registers: [this.registry],
    });
    this.sweeps = new Counter({
      name: "runaway_sweeps_total",
      help: "Sweeps by result: ok or failed (retried at the next one).",
      labelNames: ["result"],
      registers: [this.registry],
    });
    this.sweepSeconds = new Histogram({
      name: "runaway_sweep_duration_seconds",
      help: "How long one sweep took: reading the windows, flagging, publishing and pruning.",
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
      registers: [this.registry],
    });
    this.flags = new Counter({
      name: "runaway_flags_total",
      help: "Flags raised by this instance, by subject kind (key, agent), kind (spend, rate) and action (alert, paused).",
      labelNames: ["subject_kind", "kind", "action"],
      registers: [this.registry],
    });
    this.publishes = new Counter({
      name: "runaway_flag_publishes_total",
      help: "Flag events handed to the bus: published, or failed (kept and sent again at the next sweep).",
      labelNames: ["result"],
      registers: [this.registry],
    });
  }

  consumed(result: ConsumedResult): void {
    this.consumedEvents.inc({ result });
  }

  swept(result: SweepResult, seconds: number): void {
    this.sweeps.inc({ result });
    this.sweepSeconds.observe(seconds);
  }

  flagged(flag: { subjectKind: string; kind: string; action: string }): void {
    this.flags.inc({ subject_kind: flag.subjectKind, kind: flag.kind, action: flag.action });
  }

  published(result: "published" | "failed"): void {
    this.publishes.inc({ result });
  }
}
