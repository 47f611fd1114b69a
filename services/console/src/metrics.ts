import { Counter, type Registry } from "prom-client";
import { createMetricsRegistry } from "@router/http-kit";

/** How a probe's report ended: counted, or refused (a wrong token, a bad body). */
export type ProbeReportResult = "counted" | "refused";

/** Every series the console service exports, on a registry of its own per instance. */
export class ConsoleMetrics {
  readonly registry: Registry;
  private readonly probeReports: Counter<"result">;
  private readonly cspViolations: Counter;

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    this.registry = createMetricsRegistry("console", opts);
    this.probeReports = new Counter({
      name: "console_probe_reports_total",
      help: "Uptime probe reports received (POST /v1/status/probes), by result: counted or refused.",
      labelNames: ["result"],
      registers: [this.registry],
    });
    this.cspViolations = new Counter({
      name: "console_csp_violations_total",
      help: "Content-Security-Policy violations the dashboard's pages reported (each one logged as console.csp.violation).",
      registers: [this.registry],
    });
  }

  probeReported = (result: ProbeReportResult): void => {
    this.probeReports.inc({ result });
  };

  cspViolated = (count: number): void => {
    this.cspViolations.inc(count);
  };
}
