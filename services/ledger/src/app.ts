import { join } from "node:path";
import { migrate, type Db } from "@router/db";
import { startGrpcServer } from "@router/grpc-kit";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { ledger } from "@router/proto";
import { ledgerService } from "./holds/ledger-service";
import { startExpirySweep } from "./holds/settlement";
import { HoldStore } from "./holds/store";

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
}

export interface RunningLedger {
  grpcPort: number;
  close(): Promise<void>;
}

export const LEDGER_MIGRATIONS_DIR = join(__dirname, "..", "migrations");
export const DEFAULT_HOLD_TTL_MS = 15 * 60_000;
export const DEFAULT_SWEEP_INTERVAL_MS = 30_000;

/**
 * Migrates the ledger's schema, serves LedgerService (and grpc.health.v1) and runs the hold expiry
 * sweep. The caller owns `db` and closes it after `close()`.
 */
export async function startLedger(deps: LedgerDeps): Promise<RunningLedger> {
  await migrate(deps.db, LEDGER_MIGRATIONS_DIR);
  const store = new HoldStore(deps.db);
  const holdTtlMs = deps.holdTtlMs ?? DEFAULT_HOLD_TTL_MS;
  const server = await startGrpcServer(
    [
      {
        definition: ledger.LedgerServiceService,
        implementation: ledgerService({ store, clock: deps.clock, log: deps.log, holdTtlMs }),
      },
    ],
    { port: deps.grpcPort, host: deps.host, log: deps.log },
  );
  const sweep = startExpirySweep({
    store,
    clock: deps.clock,
    log: deps.log,
    intervalMs: deps.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS,
  });
  return {
    grpcPort: server.port,
    async close() {
      await sweep.stop();
      await server.close();
    },
  };
}
