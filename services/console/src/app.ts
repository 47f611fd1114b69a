import { join } from "node:path";
import { DatabaseReadiness, prepareSchema, type Db } from "@router/db";
import { createHttpApp, finishApp, listen, metricsRoute } from "@router/http-kit";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { CSP_REPORT_PATH, cspReportRoute } from "./dashboard/csp-report-route";
import { dashboardRoutes } from "./dashboard/dashboard-routes";
import { ConsoleMetrics } from "./metrics";
import { probeRoute } from "./status/probe-route";
import { uptimeRoute } from "./status/uptime-route";

export { recordProbe } from "./status/uptime-store";
export { DEFAULT_DASHBOARD_DIR, DASHBOARD_CSP } from "./dashboard/dashboard-routes";

/** The Postgres schema the console owns. */
export const CONSOLE_SCHEMA = "console";
export const CONSOLE_MIGRATIONS_DIR = join(__dirname, "..", "migrations");

export interface ConsoleDeps {
  db: Db;
  /** Applies migrations at start (default); false only checks the schema is at the latest one. */
  migrateOnStart?: boolean;
  /** The Node process metrics in this registry (default true); the one-process runner leaves them to the gateway. */
  defaultMetrics?: boolean;
  log: Logger;
  clock: Clock;
  /** 0 picks a free port. */
  httpPort: number;
  host?: string;
  /** The bearer token `router probe` reports with (`POST /v1/status/probes`); unset refuses every report. */
  probeToken?: string;
  /** The built dashboard (its `index.html` and `assets/`). Default: services/console/dashboard/dist. */
  dashboardDir?: string;
}

export interface RunningConsole {
  httpPort: number;
  close(): Promise<void>;
}

/**
 * Starts the console: the control plane's face to people and probes. It serves the dashboard's pages
 * and assets, their CSP reports, and the uptime figure with the probes' reports. Every route is public
 * (the probes bring their own token); the gateway forwards them here and limits them per address.
 * The caller owns db and closes it.
 */
export async function startConsole(deps: ConsoleDeps): Promise<RunningConsole> {
  const { log, clock } = deps;
  await prepareSchema(deps.db, CONSOLE_MIGRATIONS_DIR, { migrateOnStart: deps.migrateOnStart ?? true });
  const metrics = new ConsoleMetrics({ defaultMetrics: deps.defaultMetrics });

  // The CSP reports' bodies are read by their route, in their own content types.
  const app = createHttpApp({ log, bodyLimit: "64kb", ownBodyPaths: [CSP_REPORT_PATH] });
  // 503 while the database does not answer: readiness takes the pod out of rotation until it does.
  const readiness = new DatabaseReadiness(deps.db);
  app.get("/health", async (_req, res) => {
    if (await readiness.reachable()) {
      res.json({ status: "ok" });
    } else {
      log.warn({ err: readiness.lastError }, "console.health.database_unreachable");
      res.status(503).json({ status: "unavailable", database: "unreachable" });
    }
  });
  app.get("/metrics", metricsRoute(metrics.registry));
  app.use(uptimeRoute({ db: deps.db, clock }));
  app.use(probeRoute({ db: deps.db, clock, probeToken: deps.probeToken, onReport: metrics.probeReported }));
  app.use(cspReportRoute({ log, onViolations: metrics.cspViolated }));
  app.use(dashboardRoutes({ dir: deps.dashboardDir, log }));
  finishApp(app, log);

  const server = await listen(app, deps.httpPort, deps.host ?? "127.0.0.1");
  log.info({ httpPort: server.port }, "console.started");
  return {
    httpPort: server.port,
    close: () => server.close(),
  };
}
