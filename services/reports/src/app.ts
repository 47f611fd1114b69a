import { join } from "node:path";
import type { EventBus } from "@router/bus";
import { DatabaseReadiness, prepareSchema, type Db } from "@router/db";
import { startInternalHttp, type IdentityPublicKeys } from "@router/http-kit";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { brandingRoutes } from "./branding/branding-routes";
import { ReportsMetrics } from "./metrics";
import { reportRoutes } from "./report/report-routes";
import { subscribeRollups } from "./rollups/consumer";

export { REQUEST_COMPLETED_TOPIC, CONSUMER_GROUP, rollupHandler, rollupBatchHandler } from "./rollups/consumer";
export { MAX_LOGO_BYTES } from "./branding/brand-logo";

export const REPORTS_SCHEMA = "reports";
export const REPORTS_MIGRATIONS_DIR = join(__dirname, "..", "migrations");

export interface ReportsDeps {
  /** Applies migrations at start (default); false only checks the schema is at the latest one. */
  migrateOnStart?: boolean;
  db: Db;
  bus: EventBus;
  log: Logger;
  clock: Clock;
  /** 0 picks a free port. */
  httpPort: number;
  host?: string;
  /** Verifies the identity context the gateway signs and forwards. */
  identityKeys: IdentityPublicKeys;
  /** Off in tests that start many instances. Default on. */
  defaultMetrics?: boolean;
}

export interface RunningReports {
  httpPort: number;
  metrics: ReportsMetrics;
  close(): Promise<void>;
}

/**
 * Starts the reports service: applies its migrations, rolls every completed request from the bus
 * into its workspace's month, and serves report branding and client reports. The caller owns db
 * and bus and closes them.
 */
export async function startReports(deps: ReportsDeps): Promise<RunningReports> {
  const { log } = deps;
  await prepareSchema(deps.db, REPORTS_MIGRATIONS_DIR, { migrateOnStart: deps.migrateOnStart ?? true });
  const metrics = new ReportsMetrics({ defaultMetrics: deps.defaultMetrics });
  const subscription = await subscribeRollups(deps.bus, { db: deps.db, log, clock: deps.clock, metrics });

  const readiness = new DatabaseReadiness(deps.db);
  const server = await startInternalHttp({
    log,
    registry: metrics.registry,
    identityKeys: deps.identityKeys,
    routes: [brandingRoutes({ db: deps.db, clock: deps.clock }), reportRoutes({ db: deps.db, clock: deps.clock, metrics })],
    ready: async () => {
      const reachable = await readiness.reachable();
      if (!reachable) log.warn({ err: readiness.lastError }, "reports.health.database_unreachable");
      return reachable;
    },
    port: deps.httpPort,
    host: deps.host,
  }).catch(async (err: unknown) => {
    await subscription.close();
    throw err;
  });
  log.info({ httpPort: server.port }, "reports.started");
  return {
    httpPort: server.port,
    metrics,
    async close() {
      await subscription.close();
      await server.close();
    },
  };
}
