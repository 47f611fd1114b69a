import { Counter, type Registry } from "prom-client";
import { createMetricsRegistry } from "@router/http-kit";

/** How one `router.request.completed.v1` delivery ended for the recorder. */
export type RecordedResult = "new" | "duplicate" | "undecodable";

/** Every series the activity service exports, on a registry of its own per instance. */
export class ActivityMetrics {
  readonly registry: Registry;
  private readonly eventsRecorded: Counter<"result">;

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    this.registry = createMetricsRegistry("activity", opts);
    this.eventsRecorded = new Counter({
      name: "activity_events_recorded_total",
      help: "Completed-request deliveries by result: new (stored), duplicate (already stored) or undecodable.",
      labelNames: ["result"],
      registers: [this.registry],
    });
  }

  recorded(result: RecordedResult): void {
    this.eventsRecorded.inc({ result });
  }
}
