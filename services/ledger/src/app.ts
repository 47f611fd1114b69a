import { join } from "node:path";
import type { EventBus } from "@router/bus";
import { DatabaseReadiness, prepareSchema, type Db } from "@router/db";
import { CallStreamsServer, InProcessServer, startGrpcServer, type GrpcService } from "@router/grpc-kit";
import { startInternalHttp, startMetricsServer, type RunningHttpServer, type IdentityPublicKeys } from "@router/http-kit";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { ledger } from "@router/proto";
import { agentRoutes } from "./budgets/agent-routes";
import { BudgetCache } from "./budgets/budget-cache";
import { workspaceBudgetRoutes } from "./budgets/workspace-budget-routes";
import { expireCreditHolds, pruneExpiredCreditHolds } from "./credits/credit-holds";
import { creditPolicy, NO_FEE, requestFee, type FeeSchedule } from "./credits/credit-policy";
import { CHECKOUT_PATH, creditRoutes } from "./credits/credit-routes";
import { StripeProcessor, type StripeSettings } from "./credits/payment-processor";
import { PROCESSOR_EVENTS_PATH, processorRoutes } from "./credits/processor-routes";
import { CounterAdmissions } from "./holds/counter-admissions";
import { OpenTurns } from "./runs/open-turns";
import { GroupCommit } from "./holds/group-commit";
import { ledgerService } from "./holds/ledger-service";
import { startExpirySweep, type ClosingQueue, type UsageQueue } from "./holds/settlement";
import { HoldStore } from "./holds/store";
import { subscribeCompletedSettlement } from "./completions/completed-settlement";
import { lostRequestPublisher } from "./completions/lost-requests";
import { LedgerMetrics } from "./metrics";
import { runRoutes } from "./runs/run-routes";
import { expireTurn } from "./runs/run-settlement";
import { expiredTurns } from "./runs/run-store";
import { ThresholdPublisher } from "./thresholds/threshold-publisher";
import { pruneRecordedRequests, recordRequests } from "./usage/usage-store";

export { feeEnvironment, feeScheduleOf, stripeEnvironment, stripeSettingsOf } from "./config";

export interface LedgerDeps {
  /** Applies migrations at start (default); false only checks the schema is at the latest one. */
  migrateOnStart?: boolean;
  /** The Node process metrics in this registry (default true); the one-process runner leaves them to the gateway. */
  defaultMetrics?: boolean;
  db: Db;
  log: Logger;
  clock: Clock;
  /**
   * The LedgerService's port (0 picks a free one), or "in-process": no gRPC listener, the service is
   * called only through `RunningLedger.inProcess` (the one-process runner).
   */
  grpcPort: number | "in-process";
  host?: string;
  /**
   * How long a hold lasts unless its gateway renews it (every request still running, every lease
   * in use) before the sweep ends it as lost; default 1 minute.
   */
  holdTtlMs?: number;
  /** How often the sweep runs; default 10 seconds. */
  sweepIntervalMs?: number;
  /** How long a lease lasts (unless trimmed) before the sweep releases it; default 1 minute. */
  leaseTtlMs?: number;
  /** A lease takes at most 1/leaseShare of a ceiling's headroom (an integer, at least 1); default 4. */
  leaseShare?: number;
  /**
   * How long Admit waits, at most, for spend leases to give back the unspent headroom that alone
   * takes a counter row to its limit, before refusing; default 1.5 seconds (gateways trim a lease
   * after about a second of use; the gateway's Admit deadline is 2 seconds). 0 never waits.
   */
  leaseWaitMs?: number;
  /** Settlements, releases and expiry are applied in batches started at most this often; default 20 ms. */
  closingIntervalMs?: number;
  /** Port of a listener serving only `GET /metrics` (0 picks one). Unset: no metrics listener. */
  metricsPort?: number;
  /** Address of the metrics listener; default loopback. */
  metricsHost?: string;
  /**
   * Port of the HTTP server for the management routes the gateway forwards (workspace budgets, runs,
   * agents); 0 picks one. Served only together with `identityKeys`.
   */
  httpPort?: number;
  /** The edge's public keys (`ROUTER_IDENTITY_PUBLIC_KEYS`): verify the identity the gateway signs and forwards. */
  identityKeys?: IdentityPublicKeys;
  /**
   * Where threshold crossings are published (`router.spend.threshold_crossed.v1`). Without it they
   * wait in the ledger's outbox table (another replica with a bus publishes them).
   */
  bus?: EventBus;
  /** How long a budget written on another replica takes to bind here at most; default 5 s. */
  budgetRefreshMs?: number;
  /** How often threshold crossings waiting in the outbox are published; default 500 ms. */
  thresholdPollMs?: number;
  /** The payment processor (Stripe): its API key, webhook signing secret and API address. Unset: not configured. */
  stripe?: StripeSettings;
  /**
   * The operator's fee schedule; default no fee. With a fee, every request holds its fee against the
   * credit balance at Admit and is charged it when recorded; with a processor too, credits can be bought.
   */
  fees?: FeeSchedule & { checkoutReturnUrl?: string };
}

export interface RunningLedger {
  /** Set unless `grpcPort` was "in-process". */
  grpcPort?: number;
  /**
   * A LedgerService client for callers in this process: the same handlers and message encoding as
   * the gRPC server, without a socket (see InProcessServer).
   */
  inProcess: ledger.LedgerServiceClient;
  /** Set when `httpPort` and `identityKeys` were given. */
  httpPort?: number;
  /** Set when `metricsPort` was given and could be bound. */
  metricsPort?: number;
  close(): Promise<void>;
}

export const LEDGER_MIGRATIONS_DIR = join(__dirname, "..", "migrations");
export const DEFAULT_HOLD_TTL_MS = 60_000;
export const DEFAULT_SWEEP_INTERVAL_MS = 10_000;
export const DEFAULT_CLOSING_INTERVAL_MS = 20;
export const DEFAULT_LEASE_TTL_MS = 60_000;
export const DEFAULT_LEASE_WAIT_MS = 1_500;
export const DEFAULT_LEASE_SHARE = 4;
const CLOSING_MAX_BATCH = 100;
/** Which requests were recorded is kept this long: a gateway resends a batch within minutes. */
const RECORDED_REQUESTS_KEPT_MS = 2 * 86_400_000;

/**
 * Migrates the ledger's schema, serves LedgerService (and grpc.health.v1) and the management routes,
 * runs the hold expiry sweep and publishes threshold crossings. The caller owns `db` and `bus` and
 * closes them after `close()`.
 */
export function startLedger(deps: LedgerDeps & { grpcPort: number }): Promise<RunningLedger & { grpcPort: number }>;
export function startLedger(deps: LedgerDeps): Promise<RunningLedger>;
export async function startLedger(deps: LedgerDeps): Promise<RunningLedger> {
  const leaseShare = deps.leaseShare ?? DEFAULT_LEASE_SHARE;
  if (!Number.isInteger(leaseShare) || leaseShare < 1) {
    throw new Error(`leaseShare must be an integer of at least 1, not ${leaseShare}`);
  }
  await prepareSchema(deps.db, LEDGER_MIGRATIONS_DIR, { migrateOnStart: deps.migrateOnStart ?? true });
  const fees: FeeSchedule = deps.fees ?? NO_FEE;
  const processor = new StripeProcessor(deps.stripe ?? {});
  const policy = creditPolicy(fees, processor.configured);
  const store = new HoldStore(deps.db);
  const admissions = new CounterAdmissions({ store, log: deps.log });
  const openTurns = new OpenTurns({ db: deps.db, log: deps.log });
  const closings: ClosingQueue = new GroupCommit({
    apply: (batch) => store.closeMany(batch),
    maxBatch: CLOSING_MAX_BATCH,
    intervalMs: deps.closingIntervalMs ?? DEFAULT_CLOSING_INTERVAL_MS,
    log: deps.log,
    name: "closings",
  });
  const usage: UsageQueue = new GroupCommit({
    // Each request's credit hold settles to Router's fee on its list cost as it is recorded, and
    // each turn of a run on its run, in the same statement.
    apply: (batch) => recordRequests(deps.db, batch, (listCost) => requestFee(fees, listCost)),
    maxBatch: CLOSING_MAX_BATCH,
    intervalMs: deps.closingIntervalMs ?? DEFAULT_CLOSING_INTERVAL_MS,
    log: deps.log,
    name: "usage",
  });
  const budgets = new BudgetCache({ db: deps.db, clock: deps.clock, log: deps.log, refreshMs: deps.budgetRefreshMs });
  const holdTtlMs = deps.holdTtlMs ?? DEFAULT_HOLD_TTL_MS;
  const leaseTtlMs = deps.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
  const metrics = new LedgerMetrics({ defaultMetrics: deps.defaultMetrics });
  const streams = new CallStreamsServer(deps.log);
  metrics.watchAdmitStreams(() => streams.streams);
  const implementation = ledgerService({
    db: deps.db,
    store,
    admissions,
    openTurns,
    closings,
    usage,
    budgets,
    clock: deps.clock,
    log: deps.log,
    holdTtlMs,
    leaseTtlMs,
    leaseShare,
    leaseWaitMs: deps.leaseWaitMs ?? DEFAULT_LEASE_WAIT_MS,
    metrics,
    fees,
    streams,
  });
  const services: GrpcService[] = [{ definition: ledger.LedgerServiceService, implementation }];
  // Readiness (the service's name in grpc.health.v1) follows the database; liveness does not.
  const ready = ledgerReadiness(deps.db, deps.log);
  const inProcess = new InProcessServer(services, { ready });
  const grpcServer =
    deps.grpcPort === "in-process" ? undefined : await startGrpcServer(services, { port: deps.grpcPort, host: deps.host, log: deps.log, ready });
  // Both let the calls in flight finish and refuse new ones. The open Admit streams take no more
  // messages and end once they have answered theirs: the server's shutdown waits for every stream.
  const closeServers = async () => {
    streams.close();
    await Promise.all([grpcServer?.close(), inProcess.close()]);
  };
  // Finished requests are settled from the gateway's durable record of them, once the bus has it.
  const settling = deps.bus
    ? await subscribeCompletedSettlement(deps.bus, { db: deps.db, store, closings, usage, clock: deps.clock, log: deps.log, holdTtlMs })
    : undefined;
  const sweep = startExpirySweep({
    store,
    closings,
    clock: deps.clock,
    log: deps.log,
    lost: deps.bus ? lostRequestPublisher(deps.bus, deps.log) : undefined,
    intervalMs: deps.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS,
    prune: async () => {
      const keptSince = new Date(deps.clock.now().getTime() - RECORDED_REQUESTS_KEPT_MS);
      await pruneRecordedRequests(deps.db, keptSince);
      // Credit holds of requests whose gateway never reported them are charged what they held.
      const expiredCredits = await expireCreditHolds(deps.db, deps.clock.now());
      if (expiredCredits > 0) deps.log.info({ expired: expiredCredits }, "ledger.credit_holds.expired");
      await pruneExpiredCreditHolds(deps.db, keptSince);
      // Turns never reported (a gateway that crashed) give their reservation back, as holds do.
      const now = deps.clock.now();
      for (const turn of await expiredTurns(deps.db, now, 200)) await expireTurn(deps.db, turn, now);
    },
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
  const publisher = deps.bus
    ? new ThresholdPublisher({ db: deps.db, bus: deps.bus, clock: deps.clock, log: deps.log, pollMs: deps.thresholdPollMs })
    : undefined;
  publisher?.start();
  let http: RunningHttpServer | undefined;
  if (deps.httpPort !== undefined && deps.identityKeys) {
    const routeDeps = { db: deps.db, budgets, clock: deps.clock };
    const credits = { db: deps.db, clock: deps.clock, log: deps.log, policy, processor, checkoutReturnUrl: deps.fees?.checkoutReturnUrl };
    http = await startInternalHttp({
      log: deps.log,
      registry: metrics.registry,
      identityKeys: deps.identityKeys,
      openRoutes: [processorRoutes(credits)],
      routes: [workspaceBudgetRoutes(routeDeps), agentRoutes(routeDeps), runRoutes(routeDeps), creditRoutes(credits)],
      ownBodyPaths: [CHECKOUT_PATH, PROCESSOR_EVENTS_PATH],
      port: deps.httpPort,
      host: deps.host,
    }).catch(async (err: unknown) => {
      await Promise.all([metricsServer?.close(), sweep.stop(), publisher?.stop(), closeServers(), settling?.close()]);
      throw err;
    });
  }
  return {
    grpcPort: grpcServer?.port,
    inProcess: inProcess.client(ledger.LedgerServiceClient),
    httpPort: http?.port,
    metricsPort: metricsServer?.port,
    async close() {
      await Promise.all([metricsServer?.close(), http?.close()]);
      await sweep.stop();
      await settling?.close();
      // Calls in flight wait on the queues, so they keep applying until the server has shut down.
      await closeServers();
      await Promise.all([closings.drain(), usage.drain()]);
      await publisher?.stop();
      await budgets.close();
    },
  };
}

/** Whether the ledger's database answers; logged when it does not. */
function ledgerReadiness(db: Db, log: LedgerDeps["log"]): () => Promise<boolean> {
  const readiness = new DatabaseReadiness(db);
  return async () => {
    const reachable = await readiness.reachable();
    if (!reachable) log.warn({ err: readiness.lastError }, "ledger.health.database_unreachable");
    return reachable;
  };
}
