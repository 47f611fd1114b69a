import { join } from "node:path";
import type { EventBus } from "@router/bus";
import { DatabaseReadiness, prepareSchema, type Db } from "@router/db";
import { createHttpApp, finishApp, listen, metricsRoute, requireIdentity, type IdentityPublicKeys } from "@router/http-kit";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { subscribeRequestCompleted } from "./buckets/request-consumer";
import { flagRoutes } from "./flags/flag-routes";
import { RunawayMetrics } from "./metrics";
import { settingsRoutes } from "./settings/settings-routes";
import { SPEC_FLOORS, type RuleFloors } from "./sweep/runaway-rule";
import { SweepSchedule, type SweepReport } from "./sweep/sweeper";

export { CONSUMER_GROUP, REQUEST_COMPLETED_TOPIC, requestCompletedHandler, requestsCompletedHandler } from "./buckets/request-consumer";
export { RUNAWAY_FLAGGED_TOPIC } from "./flags/flag-events";
export type { Flag } from "./flags/flag-store";
export { SPEC_FLOORS, type RuleFloors } from "./sweep/runaway-rule";
export type { SweepReport } from "./sweep/sweeper";

/** The product's five minutes between sweeps. */
export const DEFAULT_SWEEP_INTERVAL_MS = 5 * 60_000;

export interface RunawayDeps {
  /** Applies migrations at start (default); false only checks the schema is at the latest one. */
  migrateOnStart?: boolean;
  /** The Node process metrics in this registry (default true); the one-process runner leaves them to the gateway. */
  defaultMetrics?: boolean;
  db: Db;
  bus: EventBus;
  log: Logger;
  clock: Clock;
  /** 0 picks a free port. */
  httpPort: number;
  host?: string;
  /** Verifies the identity context the gateway signs and forwards. */
  identityKeys: IdentityPublicKeys;
  /** Time between scheduled sweeps; 0 schedules none (tests call `sweep()`). Default five minutes. */
  sweepIntervalMs?: number;
  /** The rule's absolute floors; default the product's (5 USD, 300 requests). */
  floors?: RuleFloors;
}

export interface RunningRunaway {
  httpPort: number;
  /** Runs one sweep at the clock's current time, as the schedule does. */
  sweep(): Promise<SweepReport>;
  close(): Promise<void>;
}

export const RUNAWAY_MIGRATIONS_DIR = join(__dirname, "..", "migrations");

/**
 * Starts the runaway service: applies its migrations, counts every completed request from the bus
 * into its subjects' buckets, sweeps on schedule, and serves the flags and the settings. The caller
 * owns db and bus and closes them.
 */
export async function startRunaway(deps: RunawayDeps): Promise<RunningRunaway> {
  const { log } = deps;
  await prepareSchema(deps.db, RUNAWAY_MIGRATIONS_DIR, { migrateOnStart: deps.migrateOnStart ?? true });
  const metrics = new RunawayMetrics({ defaultMetrics: deps.defaultMetrics });
  const subscription = await subscribeRequestCompleted(deps.bus, { db: deps.db, log, clock: deps.clock, metrics });
  const schedule = new SweepSchedule(
    { db: deps.db, bus: deps.bus, log, clock: deps.clock, floors: deps.floors ?? SPEC_FLOORS, metrics },
    deps.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS,
  );

  const app = createHttpApp({ log });
  const readiness = new DatabaseReadiness(deps.db);
  app.get("/health", async (_req, res) => {
    if (await readiness.reachable()) {
      res.json({ status: "ok" });
    } else {
      log.warn({ err: readiness.lastError }, "runaway.health.database_unreachable");
      res.status(503).json({ status: "unavailable", database: "unreachable" });
    }
  });
  // Before the identity check: the scraper signs nothing, and this port is internal.
  app.get("/metrics", metricsRoute(metrics.registry));
  app.use(requireIdentity(deps.identityKeys));
  app.use(flagRoutes({ db: deps.db, clock: deps.clock }));
  app.use(settingsRoutes({ db: deps.db, clock: deps.clock }));
  finishApp(app, log);

  const server = await listen(app, deps.httpPort, deps.host ?? "127.0.0.1").catch(async (err: unknown) => {
    await subscription.close();
    throw err;
  });
  if ((deps.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS) > 0) schedule.start();
  log.info({ httpPort: server.port }, "runaway.started");
  return {
    httpPort: server.port,
    sweep: () => schedule.sweepNow(),
    async close() {
      await schedule.stop();
      await subscription.close();
      await server.close();
    },
  };
}
