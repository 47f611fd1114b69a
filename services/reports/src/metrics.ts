import { Counter, type Registry } from "prom-client";
import { createMetricsRegistry } from "@router/http-kit";

/**
 * How one completed request ended for the rollups: `counted` (added to its month), `duplicate`
 * (already counted), `no_workspace` (its key had no workspace, so no client report shows it) or
 * `undecodable`.
 */
export type CountedResult = "counted" | "duplicate" | "no_workspace" | "undecodable";

/** Every series the reports service exports, on a registry of its own per instance. */
export class ReportsMetrics {
  readonly registry: Registry;
  private readonly eventsCounted: Counter<"result">;
  private readonly reportsServed: Counter;

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    this.registry = createMetricsRegistry("reports", opts);
    this.eventsCounted = new Counter({
      name: "reports_events_counted_total",
      help: "Completed-request deliveries by result: counted, duplicate, no_workspace or undecodable.",
      labelNames: ["result"],
      registers: [this.registry],
    });
    this.reportsServed = new Counter({
      name: "reports_client_reports_total",
      help: "Client reports served.",
      registers: [this.registry],
    });
  }

  counted(result: CountedResult, n = 1): void {
    this.eventsCounted.inc({ result }, n);
  }

  reportServed(): void {
    this.reportsServed.inc();
  }
}
