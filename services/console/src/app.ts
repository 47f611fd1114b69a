import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseReadiness, prepareSchema, type Db } from "@router/db";
import { InProcessServer, startGrpcServer } from "@router/grpc-kit";
import { createHttpApp, finishApp, listen, metricsRoute, requireIdentity, type IdentityPublicKeys } from "@router/http-kit";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { consoleRpc } from "@router/proto";
import { ProviderCredentialSealer } from "@router/sealing";
import { credentialRoutes } from "./credentials/credential-routes";
import { consoleGrpcService } from "./console-service";
import { CSP_REPORT_PATH, cspReportRoute } from "./dashboard/csp-report-route";
import { dashboardRoutes } from "./dashboard/dashboard-routes";
import { DEFAULT_GATEWAY_URL } from "./config";
import { loggingRoutes } from "./logging-settings/logging-routes";
import { MCP_PATH, mcpRoutes } from "./mcp/mcp-route";
import { ConsoleMetrics } from "./metrics";
import { probeRoute } from "./status/probe-route";
import { uptimeRoute } from "./status/uptime-route";

export { recordProbe } from "./status/uptime-store";
export { DEFAULT_DASHBOARD_DIR, DASHBOARD_CSP } from "./dashboard/dashboard-routes";
export { loopbackHostOf } from "./mcp/mcp-route";

/** Named to MCP clients in the server's `initialize` answer. */
const VERSION = (JSON.parse(readFileSync(join(__dirname, "..", "package.json"), "utf8")) as { version: string }).version;

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
  /**
   * The ConsoleService's port (0 picks a free one), or "in-process": no gRPC listener, the gateway
   * calls it only through `RunningConsole.inProcess` (the one-process runner).
   */
  grpcPort: number | "in-process";
  host?: string;
  /** Verifies the identity the gateway signs and forwards with management routes. */
  identityKeys: IdentityPublicKeys;
  /** ROUTER_MASTER_KEY: seals provider credentials as they are added. */
  masterKey: string;
  /** The bearer token `router probe` reports with (`POST /v1/status/probes`); unset refuses every report. */
  probeToken?: string;
  /** The built dashboard (its `index.html` and `assets/`). Default: services/console/dashboard/dist. */
  dashboardDir?: string;
  /**
   * The gateway the MCP tools call (CONSOLE_GATEWAY_URL), or a getter read on each call (the
   * one-process runner knows its gateway's port once it listens). Default `http://127.0.0.1:8080`.
   */
  gatewayUrl?: string | (() => string);
}

export interface RunningConsole {
  httpPort: number;
  /** Set unless `grpcPort` was "in-process". */
  grpcPort?: number;
  /** The ConsoleService without a socket, for a gateway in this process. */
  inProcess: consoleRpc.ConsoleServiceClient;
  close(): Promise<void>;
}

/**
 * Starts the console, the control plane off the data plane. Over HTTP, as the gateway forwards them:
 * the dashboard's pages and assets, their CSP reports, the uptime figure with the probes' reports
 * (public: the probes bring their own token; the gateway limits them per address), and, with the
 * caller's signed identity, the organisations' provider credentials and content-logging settings.
 * Over gRPC, what the gateway asks on a cache miss: an organisation's enabled credentials, sealed,
 * and the keys its logging settings exclude. The caller owns db and closes it.
 */
export async function startConsole(deps: ConsoleDeps): Promise<RunningConsole> {
  const { log, clock } = deps;
  await prepareSchema(deps.db, CONSOLE_MIGRATIONS_DIR, { migrateOnStart: deps.migrateOnStart ?? true });
  const metrics = new ConsoleMetrics({ defaultMetrics: deps.defaultMetrics });

  // The CSP reports' bodies and MCP's messages are read by their routes (their own content types, JSON-RPC errors).
  const app = createHttpApp({ log, bodyLimit: "64kb", ownBodyPaths: [CSP_REPORT_PATH, MCP_PATH] });
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
  const gatewayUrl = deps.gatewayUrl ?? DEFAULT_GATEWAY_URL;
  app.use(mcpRoutes({ gatewayUrl: typeof gatewayUrl === "string" ? () => gatewayUrl : gatewayUrl, version: VERSION }));
  // Every route below carries the caller's identity, signed by the gateway.
  app.use(requireIdentity(deps.identityKeys));
  app.use(credentialRoutes({ db: deps.db, sealer: new ProviderCredentialSealer(deps.masterKey), clock }));
  app.use(loggingRoutes({ db: deps.db, clock }));
  finishApp(app, log);

  const services = [consoleGrpcService({ db: deps.db, log })];
  const inProcess = new InProcessServer(services);
  const server = await listen(app, deps.httpPort, deps.host ?? "127.0.0.1");
  const grpc =
    deps.grpcPort === "in-process"
      ? undefined
      : await startGrpcServer(services, { port: deps.grpcPort, host: deps.host, log }).catch(async (err: unknown) => {
          await server.close();
          throw err;
        });
  log.info({ httpPort: server.port, grpcPort: grpc?.port ?? "in-process" }, "console.started");
  return {
    httpPort: server.port,
    grpcPort: grpc?.port,
    inProcess: inProcess.client(consoleRpc.ConsoleServiceClient),
    async close() {
      await Promise.all([server.close(), grpc?.close(), inProcess.close()]);
    },
  };
}
