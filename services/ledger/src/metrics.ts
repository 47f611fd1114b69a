import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { createMetricsRegistry } from "@router/http-kit";
import type { Admission } from "./holds/admission";
import type { Lease } from "./holds/leases";

/** How one Admit call was decided. */
export type AdmitResult = "admitted" | "refused" | "soft_warning";

/** How one Lease call was decided. */
export type LeaseResult = "granted" | "refused";

// Admit is one statement on the hot path, or none when nothing counts a request: from a tenth of a
// millisecond to milliseconds, tens of them under contention.
const ADMIT_BUCKETS = [0.0001, 0.00025, 0.0005, 0.00075, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
// A closing waits for its group-commit batch (started at most every closingIntervalMs, 20 ms by default).
const CLOSING_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.25, 1];

const admitResult = (a: Admission): AdmitResult =>
  !a.admitted ? "refused" : a.warning ? "soft_warning" : "admitted";

const leaseResult = (l: Lease): LeaseResult => (l.granted ? "granted" : "refused");

/** Every series the ledger exports, on a registry of its own per instance. */
export class LedgerMetrics {
  readonly registry: Registry;
  private readonly admits: Counter<"result">;
  private readonly admitDuration: Histogram;
  private readonly closingDuration: Histogram;
  private readonly leases: Counter<"result">;
  private admitStreams: () => number = () => 0;

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    this.registry = createMetricsRegistry("ledger", opts);
    const registers = [this.registry];
    this.admits = new Counter({
      name: "ledger_admit_total",
      help: "Admit calls decided, by result: admitted, refused, or soft_warning (admitted past a soft ceiling).",
      labelNames: ["result"],
      registers,
    });
    this.admitDuration = new Histogram({
      name: "ledger_admit_duration_seconds",
      help: "Time to decide one Admit call, reservation included.",
      buckets: ADMIT_BUCKETS,
      registers,
    });
    this.closingDuration = new Histogram({
      name: "ledger_closing_duration_seconds",
      help: "Time to answer one CloseHolds call: until its group-commit batch has committed.",
      buckets: CLOSING_BUCKETS,
      registers,
    });
    this.leases = new Counter({
      name: "ledger_lease_total",
      help: "Lease calls decided, by result: granted (a lease asked for again included) or refused.",
      labelNames: ["result"],
      registers,
    });
    const streams = () => this.admitStreams();
    new Gauge({
      name: "ledger_admit_streams",
      help: "AdmitStream streams open now: gateways keep a few each (GATEWAY_LEDGER_ADMIT_STREAMS) and send every Admit on them.",
      registers,
      collect() {
        this.set(streams());
      },
    });
  }

  /** Reports the open AdmitStream streams from the server's own count. */
  watchAdmitStreams(open: () => number): void {
    this.admitStreams = open;
  }

  /** Starts timing one admission; call the result with its decision. */
  startAdmit(): (admission: Admission) => void {
    const done = this.admitDuration.startTimer();
    return (admission) => {
      done();
      this.admits.inc({ result: admitResult(admission) });
    };
  }

  /** Starts timing one CloseHolds call; call the result once it is answered. */
  startClosing(): () => void {
    const done = this.closingDuration.startTimer();
    return () => void done();
  }

  countLease(lease: Lease): void {
    this.leases.inc({ result: leaseResult(lease) });
  }
}
