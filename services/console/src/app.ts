import { readFileSync } from "node:fs";
import type { Express } from "express";
import { join } from "node:path";
import { DatabaseReadiness, prepareSchema, type Db } from "@router/db";
import { InProcessServer, startGrpcServer } from "@router/grpc-kit";
import { createHttpApp, finishApp, listen, metricsRoute, requireIdentity, type IdentityPublicKeys } from "@router/http-kit";
import { createAuthorize } from "./auth/principal";
import { keyRoutes } from "./keys/key-routes";
import { organisationRoutes } from "./organisations/organisation-routes";
import { workspaceRoutes } from "./organisations/workspace-routes";
import { invitationRoutes } from "./people/invitation-routes";
import { memberRoutes } from "./people/member-routes";
import { DEFAULT_PKCE_KEY_DAYS, DEFAULT_PKCE_KEY_LIMIT_USD, pkceRoutes } from "./pkce/pkce-routes";
import { sessionRoutes } from "./sessions/session-routes";
import { SessionIssuer } from "./sessions/session-issuer";
import { OAuthClients, type OAuthProviders } from "./sign-in/oauth-providers";
import { oauthRoutes } from "./sign-in/oauth-routes";
import { signInMethodsRoute } from "./sign-in/sign-in-methods";
import { walletRoutes } from "./sign-in/wallet-routes";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { consoleRpc, type ledger } from "@router/proto";
import { ProviderCredentialSealer } from "@router/sealing";
import { credentialRoutes } from "./credentials/credential-routes";
import { consoleGrpcService } from "./console-service";
import { CSP_REPORT_PATH, cspReportRoute } from "./dashboard/csp-report-route";
import { dashboardRoutes } from "./dashboard/dashboard-routes";
import { openApiRoutes } from "./openapi/openapi-routes";
import { DEFAULT_GATEWAY_URL } from "./config";
import { loggingRoutes } from "./logging-settings/logging-routes";
import { MCP_PATH, mcpRoutes } from "./mcp/mcp-route";
import { ConsoleMetrics } from "./metrics";
import { probeRoute } from "./status/probe-route";
import { uptimeRoute } from "./status/uptime-route";

export { recordProbe } from "./status/uptime-store";
export { createOrganisation, ensureOperatorOrganisation, operatorOrganisationExists, type CreatedOrganisation } from "./organisations/organisation-creation";
export { listOrganisations, mintManagementKey, type OrganisationSummary } from "./organisations/operator-recovery";
export { pkceEnvironment, pkceOptionsOf, signInEnvironment, signInOptionsOf, incompleteSignInProviders } from "./config";
export type { OAuthProviders } from "./sign-in/oauth-providers";
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
  /** The release the OpenAPI document names (`info.version`); default this package's version. */
  version?: string;
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
  /** ROUTER_KEY_PEPPER: keys are minted here and stored by their peppered hash. */
  pepper: string;
  /**
   * ROUTER_INTERNAL_SECRET: keys the sessions' CSRF tokens (the gateway checks them with the same
   * secret) and the OAuth sign-in's state cookie.
   */
  csrfSecret: string;
  /** The ledger over gRPC: what each key's ceiling and each workspace has spent. */
  ledger: ledger.LedgerServiceClient;
  /** Deadline of each ledger call. Default 1000 ms. */
  grpcDeadlineMs?: number;
  /**
   * Where people reach this deployment (ROUTER_PUBLIC_URL: scheme, host, optional path prefix):
   * invitation links, sign-in redirects and the wallet message's domain are built on it; a getter
   * when the gateway's port is known only once it listens. Default: the gateway's URL.
   */
  publicUrl?: string | (() => string);
  /** Identity providers offered for sign-in (CONSOLE_OAUTH_*); none by default. */
  oauthProviders?: OAuthProviders;
  /** Whether wallet sign-in (Sign-In with Ethereum) is offered (CONSOLE_WALLET_SIGNIN). Default true. */
  walletSignIn?: boolean;
  /** Hard lifetime spend ceiling of a key issued through OAuth PKCE, USD. Default 10. */
  pkceKeyLimitUsd?: number;
  /** Lifetime of a key issued through OAuth PKCE, days from its exchange. Default 30. */
  pkceKeyDays?: number;
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
  // The whole public API's description (the gateway's inference routes included), built from the schemas that validate it.
  app.use(openApiRoutes({ version: deps.version ?? VERSION }));
  const gatewayUrl = deps.gatewayUrl ?? DEFAULT_GATEWAY_URL;
  const gatewayUrlOf = typeof gatewayUrl === "string" ? () => gatewayUrl : gatewayUrl;
  app.use(mcpRoutes({ gatewayUrl: gatewayUrlOf, version: VERSION }));
  mountIdentityRoutes(app, deps, gatewayUrlOf);
  // Every route below carries the caller's identity, signed by the gateway.
  app.use(requireIdentity(deps.identityKeys));
  app.use(credentialRoutes({ db: deps.db, sealer: new ProviderCredentialSealer(deps.masterKey), clock }));
  app.use(loggingRoutes({ db: deps.db, clock }));
  finishApp(app, log);

  const services = [consoleGrpcService({ db: deps.db, log, clock })];
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

/**
 * Identity: organisations and workspaces, people and invitations, sessions and sign-in, PKCE, and
 * keys as resources. Public routes (sign-in, invitation lookup, the PKCE exchange) carry no
 * identity; every other one checks the identity the gateway signed, through `authorize`.
 */
function mountIdentityRoutes(app: Express, deps: ConsoleDeps, gatewayUrl: () => string): void {
  const { db, clock, log, pepper, csrfSecret } = deps;
  const authorize = createAuthorize(deps.identityKeys);
  const grpcDeadlineMs = deps.grpcDeadlineMs ?? 1000;
  const publicUrl = (): string => (typeof deps.publicUrl === "function" ? deps.publicUrl() : deps.publicUrl ?? gatewayUrl()).replace(/\/+$/, "");
  const issuer = new SessionIssuer({ clock, csrfSecret });
  app.use(keyRoutes({ db, authorize, identityKeys: deps.identityKeys, ledger: deps.ledger, pepper, clock, grpcDeadlineMs }));
  app.use(sessionRoutes({ db, authorize, issuer, pepper, clock, csrfSecret }));
  app.use(organisationRoutes({ db, authorize }));
  app.use(workspaceRoutes({ db, authorize, clock, ledger: deps.ledger, grpcDeadlineMs }));
  app.use(memberRoutes({ db, authorize, clock }));
  app.use(invitationRoutes({ db, authorize, clock, issuer, publicUrl }));
  app.use(
    pkceRoutes({
      db,
      authorize,
      pepper,
      clock,
      keyLimitUsd: deps.pkceKeyLimitUsd ?? DEFAULT_PKCE_KEY_LIMIT_USD,
      keyDays: deps.pkceKeyDays ?? DEFAULT_PKCE_KEY_DAYS,
    }),
  );
  const walletSignIn = deps.walletSignIn ?? true;
  const oauthClients = new OAuthClients(deps.oauthProviders ?? {}, (slug) => `${publicUrl()}/v1/auth/oauth/${slug}/callback`, log);
  app.use(signInMethodsRoute({ clients: oauthClients, wallet: walletSignIn }));
  app.use(oauthRoutes({ db, clock, log, clients: oauthClients, issuer, secret: csrfSecret, publicUrl }));
  app.use(walletRoutes({ db, clock, issuer, publicUrl, enabled: walletSignIn }));
}
