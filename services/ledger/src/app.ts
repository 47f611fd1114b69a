import { join } from "node:path";
import { migrate, type Db } from "@router/db";
import { startGrpcServer } from "@router/grpc-kit";
import { startMetricsServer } from "@router/http-kit";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { ledger } from "@router/proto";
import { CounterAdmissions } from "./holds/counter-admissions";
import { GroupCommit } from "./holds/group-commit";
import { ledgerService } from "./holds/ledger-service";
import { startExpirySweep, type ClosingQueue } from "./holds/settlement";
import { HoldStore } from "./holds/store";
import { LedgerMetrics } from "./metrics";

export interface LedgerDeps {
  db: Db;
  log: Logger;
  clock: Clock;
  /** 0 picks a free port. */
  grpcPort: number;
  host?: string;
  /** How long a hold lasts before the sweep releases it; default 15 minutes. */
  holdTtlMs?: number;
  /** How often the sweep runs; default 30 seconds. */
  sweepIntervalMs?: number;
  /** How long a lease lasts (unless trimmed) before the sweep releases it; default 1 minute. */
  leaseTtlMs?: number;
  /** A lease takes at most 1/leaseShare of a ceiling's headroom (an integer, at least 1); default 4. */
  leaseShare?: number;
  /** Settle, Release and expiry are applied in batches started at most this often; default 20 ms. */
  closingIntervalMs?: number;
  /** Port of a listener serving only `GET /metrics` (0 picks one). Unset: no metrics listener. */
  metricsPort?: number;
  /** Address of the metrics listener; default loopback. */
  metricsHost?: string;
}

export interface RunningLedger {
  grpcPort: number;
  /** Set when `metricsPort` was given and could be bound. */
  metricsPort?: number;
  close(): Promise<void>;
}

export const LEDGER_MIGRATIONS_DIR = join(__dirname, "..", "migrations");
export const DEFAULT_HOLD_TTL_MS = 15 * 60_000;
export const DEFAULT_SWEEP_INTERVAL_MS = 30_000;
export const DEFAULT_CLOSING_INTERVAL_MS = 20;
export const DEFAULT_LEASE_TTL_MS = 60_000;
export const DEFAULT_LEASE_SHARE = 4;
const CLOSING_MAX_BATCH = 100;

/**
 * Migrates the ledger's schema, serves LedgerService (and grpc.health.v1) and runs the hold expiry
 * sweep. The caller owns `db` and closes it after `close()`.
 */
export async function startLedger(deps: LedgerDeps): Promise<RunningLedger> {
  const leaseShare = deps.leaseShare ?? DEFAULT_LEASE_SHARE;
  if (!Number.isInteger(leaseShare) || leaseShare < 1) {
    throw new Error(`leaseShare must be an integer of at least 1, not ${leaseShare}`);
  }
  await migrate(deps.db, LEDGER_MIGRATIONS_DIR);
  const store = new HoldStore(deps.db);
  const admissions = new CounterAdmissions({ store, log: deps.log });
  const closings: ClosingQueue = new GroupCommit({
    apply: (batch) => store.closeMany(batch),
    maxBatch: CLOSING_MAX_BATCH,
    intervalMs: deps.closingIntervalMs ?? DEFAULT_CLOSING_INTERVAL_MS,
    log: deps.log,
    name: "closings",
  });
  const holdTtlMs = deps.holdTtlMs ?? DEFAULT_HOLD_TTL_MS;
  const leaseTtlMs = deps.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
  const metrics = new LedgerMetrics();
  const implementation = ledgerService({
    store,
    admissions,
    closings,
    clock: deps.clock,
    log: deps.log,
    holdTtlMs,
    leaseTtlMs,
    leaseShare,
    metrics,
  });
  const server = await startGrpcServer(
    [{ definition: ledger.LedgerServiceService, implementation }],
    { port: deps.grpcPort, host: deps.host, log: deps.log },
  );
  const sweep = startExpirySweep({
    store,
    closings,
    clock: deps.clock,
    log: deps.log,
    intervalMs: deps.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS,
  });
  // Metrics are auxiliary: a port that cannot be bound is logged and never stops the ledger.
  const metricsServer =
    deps.metricsPort === undefined
      ? undefined
      : await startMetricsServer(metrics.registry, { port: deps.metricsPort, host: deps.metricsHost, log: deps.log }).catch(
          (err: unknown) => {
            deps.log.error({ err, port: deps.metricsPort }, "ledger.metrics.listen_failed");
            return undefined;
          },
        );
  return {
    grpcPort: server.port,
    metricsPort: metricsServer?.port,
    async close() {
      await metricsServer?.close();
      await sweep.stop();
      // Calls in flight wait on the queue, so it keeps applying until the server has shut down.
      await server.close();
      await closings.drain();
    },
  };
}
