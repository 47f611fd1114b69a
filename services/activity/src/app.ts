import { join } from "node:path";
import type { EventBus } from "@router/bus";
import { DatabaseReadiness, prepareSchema, type Db } from "@router/db";
import { createHttpApp, finishApp, listen, metricsRoute, requireIdentity, type IdentityPublicKeys } from "@router/http-kit";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { contentRoutes } from "./content/content-routes";
import { conversationRoutes } from "./conversations/conversation-routes";
import { exportRoutes } from "./export/export-routes";
import { ActivityMetrics } from "./metrics";
import { subscribeRequestCompleted } from "./recording/consumer";
import { requestRoutes } from "./requests/request-routes";
import { breakdownRoutes } from "./totals/breakdown-routes";
import { totalsRoutes } from "./totals/totals-routes";
import { upstreamRoutes } from "./upstream/upstream-routes";

export { REQUEST_COMPLETED_TOPIC, CONSUMER_GROUP, requestCompletedHandler, requestsCompletedHandler } from "./recording/consumer";

export interface ActivityDeps {
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
  /** Rows of a CSV export before its `# truncated` line; default 200,000 (product rule). Tests make it small. */
  exportMaxRows?: number;
}

export interface RunningActivity {
  httpPort: number;
  close(): Promise<void>;
}

export const ACTIVITY_MIGRATIONS_DIR = join(__dirname, "..", "migrations");

/**
 * Starts the activity service: applies its migrations, records every completed request from the
 * bus, and serves the activity and generation routes. The caller owns db and bus and closes them.
 */
export async function startActivity(deps: ActivityDeps): Promise<RunningActivity> {
  const { log } = deps;
  await prepareSchema(deps.db, ACTIVITY_MIGRATIONS_DIR, { migrateOnStart: deps.migrateOnStart ?? true });
  const metrics = new ActivityMetrics({ defaultMetrics: deps.defaultMetrics });
  const subscription = await subscribeRequestCompleted(deps.bus, { db: deps.db, log, clock: deps.clock, metrics });

  const app = createHttpApp({ log });
  // 503 while the database does not answer: readiness takes the pod out of rotation until it does.
  const readiness = new DatabaseReadiness(deps.db);
  app.get("/health", async (_req, res) => {
    if (await readiness.reachable()) {
      res.json({ status: "ok" });
    } else {
      log.warn({ err: readiness.lastError }, "activity.health.database_unreachable");
      res.status(503).json({ status: "unavailable", database: "unreachable" });
    }
  });
  // Before the identity check: the scraper signs nothing, and this port is internal.
  app.get("/metrics", metricsRoute(metrics.registry));
  app.use(requireIdentity(deps.identityKeys));
  app.use(totalsRoutes({ db: deps.db, clock: deps.clock }));
  app.use(breakdownRoutes({ db: deps.db, clock: deps.clock }));
  app.use(conversationRoutes({ db: deps.db, clock: deps.clock }));
  app.use(exportRoutes({ db: deps.db, clock: deps.clock, log, maxRows: deps.exportMaxRows }));
  app.use(requestRoutes({ db: deps.db, clock: deps.clock }));
  app.use(upstreamRoutes({ db: deps.db, clock: deps.clock }));
  app.use(contentRoutes({ db: deps.db }));
  finishApp(app, log);

  const server = await listen(app, deps.httpPort, deps.host ?? "127.0.0.1").catch(async (err: unknown) => {
    await subscription.close();
    throw err;
  });
  log.info({ httpPort: server.port }, "activity.started");
  return {
    httpPort: server.port,
    async close() {
      await subscription.close();
      await server.close();
    },
  };
}
