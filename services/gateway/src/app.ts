import type { IncomingMessage } from "node:http";
import { tracedListener } from "@router/tracing";
import { join } from "node:path";
import Redis from "ioredis";
import type { EventBus } from "@router/bus";
import { parseIdentitySigningKey } from "@router/config";
import { prepareSchema, type Db } from "@router/db";
import { createHttpApp, finishApp, identitySigningKey, listen, routeAhead, startMetricsServer } from "@router/http-kit";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { CONSOLE_MCP } from "@router/management-api";
import type { consoleRpc, ledger, routing } from "@router/proto";
import { ProviderCredentialSealer } from "@router/sealing";
import { AuthCache } from "./auth/auth-cache";
import { createAuthenticator, createCallerResolver } from "./auth/authenticate";
import { createManagementAuth } from "./auth/management-auth";
import { createKeyOrSessionResolver } from "./auth/session-caller";
import { inferenceRoutes } from "./chat/completions-route";
import { ingressesWith } from "./ingress";
import { CHAT_COMPLETIONS_PATH } from "./ingress/chat-completions";
import type { Ingress } from "./ingress/ingress";
import { inputTokensRoutes } from "./ingress/responses/input-tokens-route";
import { AccountPrivacy } from "./stored-responses/account-privacy";
import { StoragePolicy } from "./stored-responses/storage-policy";
import { storedResponseRoutes } from "./stored-responses/stored-response-routes";
import { StoredResponses } from "./stored-responses/stored-response-store";
import { UpstreamDispatcher } from "./dispatch/upstream-dispatcher";
import type { UpstreamTimeouts } from "./dispatch/upstream-client";
import { createRecentGenerations } from "./generation/recent-generations";
import { generationRoutes } from "./generation/routes";
import { healthRoutes } from "./health/health-routes";
import { diagnosticsRoute } from "./health/diagnostics-route";
import { Drain } from "./shutdown/drain";
import { previewRoutes } from "./routing/preview-route";
import { COUNT_TOKENS_PATH, countTokensRoutes } from "./ingress/anthropic-messages/count-tokens-route";
import { MESSAGES_BODY_LIMIT } from "./ingress/anthropic-messages";
import { ContentFilters } from "./content-filter/content-filters";
import { BudgetSubjects } from "./spend/budget-subjects";
import { CreditStanding } from "./spend/credit-standing";
import { InferenceRateTiers, type RateTier } from "./rate-limits/inference-tiers";
import { servedRoutes, type ServedRoute } from "./meta/served-routes";
import { SelfCallTokens } from "./rate-limits/self-calls";
import { regionRoute, type RegionHeaders } from "./meta/region-route";
import { GatewayMetrics } from "./metrics";
import { grpcConsolePort } from "./console/console-port";
import { StoredCredentialSource } from "./provider-keys/credential-source";
import { consolePageRoutes, UNREAD_BODY_PATHS, proxyRoutes } from "./proxy/proxy-routes";
import { PKCE_EXCHANGE_PATH, pkceExchangePreflight } from "./proxy/pkce-cors";
import { consoleMcpRoutes } from "./proxy/console-mcp-route";
import { runawayFlagRoutes } from "./runaway/runaway-flag-routes";
import { subscribeRunawayFlags } from "./runaway/runaway-flags";
import { trustedProxies } from "./rate-limits/client-address";
import { limitTable, type RateLimitOverrides } from "./rate-limits/limits";
import { GatewayRateLimits } from "./rate-limits/rate-limit-middleware";
import { RateLimitStore } from "./rate-limits/rate-limiter";
import { SessionDirectory } from "./auth/session-directory";
import { UpstreamProxy } from "./proxy/upstream-proxy";
import { DEFAULT_CONSOLE_HTTP_URL, DEFAULT_RUNAWAY_HTTP_URL, type GatewaySecrets } from "./config";
import { cachedRoutingPort } from "./routing/plan-cache";
import { grpcRoutingPort } from "./routing/routing-port";
import { HoldClosings } from "./spend/hold-closings";
import { admitStreamsFor, grpcLedgerPort } from "./spend/ledger-port";
import { RecentBudgetWrites } from "./spend/recent-budget-writes";
import { SpendLeases } from "./spend/spend-leases";

export { requireCaller, type Authenticate, type AuthenticateOptions } from "./auth/authenticate";
export type { Caller, CallerKey } from "./auth/caller";
export type { CredentialSource, DispatchCredential } from "./provider-keys/dispatch-credential";
export { PROVIDER_SLUGS, type ProviderSlug } from "@router/providers";

export {
  storedResponseEnvironment,
  storedResponseOptionsOf,
  rateLimitEnvironment,
  rateLimitOptionsOf,
  regionEnvironment,
  regionOptionsOf,
  upstreamEnvironment,
  upstreamOptionsOf,
} from "./config";
export type { RateLimitOverrides } from "./rate-limits/limits";

/** The Postgres schema the gateway owns. */
export const GATEWAY_SCHEMA = "gateway";

export const GATEWAY_MIGRATIONS_DIR = join(__dirname, "..", "migrations");
/** How long shutdown waits for pending settlements to reach the ledger. */
const CLOSINGS_FLUSH_MS = 5_000;
const DEFAULT_DRAIN_GRACE_MS = 20_000;
/** Streams carrying Admit to a networked ledger: each is placed on a ledger replica as a call is. */
const DEFAULT_ADMIT_STREAMS = 4;
/** Closing servers, clients and channels after the drain; a bound for the shutdown's step, not a wait. */
const CLOSE_CHANNELS_MS = 5_000;
/** How long start waits for the rate limits' Redis connection before counting in memory meanwhile. */
const RATE_LIMIT_REDIS_WAIT_MS = 2_000;
/** A rate-limit count Redis has not answered by then is counted in memory (the insurance limiter). */
const RATE_LIMIT_REDIS_TIMEOUT_MS = 500;

/** The request's path as `routeAhead` matches it (any letter case, an optional trailing slash). */
const pathOf = (req: IncomingMessage): string => ((req.url ?? "").split("?")[0] ?? "").replace(/(?<=.)\/$/, "").toLowerCase();

/**
 * Applies the gateway's migrations (idempotent; safe when several replicas start together), or with
 * `migrateOnStart: false` only checks the schema is at the latest one (see prepareSchema).
 */
export function migrateGateway(db: Db, opts: { migrateOnStart: boolean } = { migrateOnStart: true }): Promise<{ applied: string[] }> {
  return prepareSchema(db, GATEWAY_MIGRATIONS_DIR, opts);
}

export interface GatewayDeps {
  db: Db;
  /** Applies migrations at start (default); false only checks the schema is at the latest one. */
  migrateOnStart?: boolean;
  bus: EventBus;
  log: Logger;
  clock: Clock;
  port: number;
  host?: string;
  secrets: GatewaySecrets;
  routing: routing.RoutingServiceClient;
  ledger: ledger.LedgerServiceClient;
  /**
   * The console over gRPC, asked on a cache miss: keys and sessions (authentication), an
   * organisation's provider credentials and excluded keys, workspaces and names for forwarded routes.
   */
  console: consoleRpc.ConsoleServiceClient;
  activityUrl: string;
  /** The alerts service: alert channels, test alerts and the delivery log are forwarded there. */
  alertsUrl: string;
  routingUrl: string;
  /** The ledger's management routes (workspace budgets, agents). */
  ledgerUrl: string;
  reportsUrl: string;
  broadcastUrl: string;
  /** The runaway service's HTTP address (flags and their settings). Default `http://127.0.0.1:8087`. */
  runawayUrl?: string;
  /**
   * The console's HTTP address, where the gateway forwards identity and management (organisations,
   * people, sessions and sign-in, keys, provider credentials, logging settings), the dashboard's
   * pages, uptime and probe reports, and MCP. Default `http://127.0.0.1:8088`.
   */
  consoleUrl?: string;
  /** `ROUTER_PROVIDER_<SLUG>_BASE_URL` overrides, by lower-case slug. */
  providerBaseUrls: Record<string, string>;
  /** Set when rate limits and caches are shared through Redis. */
  redisUrl?: string;
  /**
   * `GATEWAY_TRUSTED_PROXIES`: addresses or CIDRs of proxies whose `X-Forwarded-For` names the
   * client address for per-address limits. Default: none (the socket's peer is the client).
   */
  trustedProxies?: readonly string[];
  /** Prefix of every rate-limit key in Redis, so installs or test runs can share one. Default `router:rl`. */
  rateLimitPrefix?: string;
  /** Replaces the windows of the named limits of `RATE_LIMITS` (tests, benchmarks). */
  rateLimits?: RateLimitOverrides;
  /** `ROUTER_RATE_TIERS`: request-rate ceilings on inference by lifetime credit purchase. Default none. */
  rateTiers?: readonly RateTier[];
  grpcDeadlineMs?: number;
  /**
   * How many AdmitStream streams carry this gateway's Admit calls when `ledger` is a gRPC client
   * (`GATEWAY_LEDGER_ADMIT_STREAMS`); 0 sends each Admit as a unary call. Default 4. A ledger
   * served in process always takes unary calls: it has no streams and no sockets to spare.
   */
  ledgerAdmitStreams?: number;
  /** How long an identical routing plan is reused (0 asks routing every time). Default 1000 ms. */
  planCacheMs?: number;
  /**
   * How long one spend lease admits requests under hard ceilings; 0 turns leases off (every such
   * request asks the ledger's Admit). Default 1000 ms.
   */
  leaseUseMs?: number;
  /** How often the holds of running requests are renewed at the ledger; default 15 s. */
  holdRenewMs?: number;
  /** Provider call timeouts; each unset one keeps its default (docs/adr, ADR 0022). */
  upstreamTimeouts?: Partial<UpstreamTimeouts>;
  /** Quiet time after which a waiting stream gets a keepalive comment. Default 5 s. */
  keepaliveMs?: number;
  /**
   * On close, how long requests in flight (streams included) may take to finish before they are cut
   * with `router.gateway_shutdown` (GATEWAY_DRAIN_GRACE_MS). Default 20 s.
   */
  drainGraceMs?: number;
  /** Days a stored response (`store` on POST /v1/responses) is kept before it is purged. Default 30. */
  storedResponseDays?: number;
  /** Trusted edge headers naming the caller's country and subdivision (GATEWAY_REGION_HEADER...); none by default. */
  regionHeaders?: RegionHeaders;
  version: string;
  /**
   * Port of the admin listener serving only `GET /metrics` (0 picks one). Unset: no metrics
   * listener. Never the public port: the edge does not expose metrics.
   */
  metricsPort?: number;
  /** Address of the metrics listener; default loopback. */
  metricsHost?: string;
}

export interface RunningGateway {
  port: number;
  /** Every route served: the inference routes Node serves ahead of express, then express's routes. */
  routes: ServedRoute[];
  /** Set when `metricsPort` was given. */
  metricsPort?: number;
  /** How long `close()` can take at most: the drain grace, then handing on spend and closing channels. */
  closeTimeoutMs: number;
  close(): Promise<void>;
  /** While `close()` drains: the streams and plain requests still open, and when its grace ends (epoch ms). */
  drainProgress(): { streams: number; requests: number; graceEndsAt: number } | undefined;
  /** Ends the drain's grace now: open requests are cut (each recorded as cut) and `close()` goes on. */
  hurryClose(): void;
}

/** Migrates the gateway's schema, mounts every route and listens. Takes everything it uses as arguments. */
export async function startGateway(deps: GatewayDeps): Promise<RunningGateway> {
  await migrateGateway(deps.db, { migrateOnStart: deps.migrateOnStart ?? true });
  const grpcDeadlineMs = deps.grpcDeadlineMs ?? 1000;
  const runawayUrl = deps.runawayUrl ?? DEFAULT_RUNAWAY_HTTP_URL;
  const pepper = deps.secrets.ROUTER_KEY_PEPPER;
  // Only the edge holds it: the internal services verify with its public half.
  const identityKey = identitySigningKey(parseIdentitySigningKey(deps.secrets.ROUTER_IDENTITY_SIGNING_KEY));
  // One connection for the recent-generations copy that lets any instance answer GET /v1/generation,
  // and for the evictions of changed keys and sessions that reach every replica at once.
  const redis = deps.redisUrl ? new Redis(deps.redisUrl, { maxRetriesPerRequest: 1 }) : undefined;
  redis?.on("error", (err: unknown) => deps.log.warn({ err }, "gateway.redis.error"));
  // Keys and sessions are the console's: asked on a miss, cached ten seconds at most.
  const consolePort = grpcConsolePort(deps.console, { deadlineMs: grpcDeadlineMs });
  const authCache = new AuthCache((hash) => consolePort.findKey(hash), deps.clock, {
    shared: redis ? { redis, log: deps.log } : undefined,
  });
  const authDeps = { cache: authCache, pepper, clock: deps.clock };
  const authenticate = createAuthenticator(authDeps);
  const metrics = new GatewayMetrics();
  metrics.watchAuthCache(() => authCache.stats());
  const credentials = new StoredCredentialSource({
    directory: consolePort,
    sealer: new ProviderCredentialSealer(deps.secrets.ROUTER_MASTER_KEY),
    clock: deps.clock,
    log: deps.log,
  });
  const proxy = new UpstreamProxy(deps.log);
  const upstream = new UpstreamDispatcher({ timeouts: deps.upstreamTimeouts, onCircuitChange: metrics.circuitChanged });
  const recent = createRecentGenerations({ redis, log: deps.log });
  const inference = authenticate({ allow: ["inference"] });
  const csrfSecret = deps.secrets.ROUTER_INTERNAL_SECRET;
  const sessions = new SessionDirectory({ load: (hash) => consolePort.findSession(hash), clock: deps.clock, log: deps.log, redis });
  // Rate limits count on a Redis connection of their own, whose commands give up quickly: a count
  // Redis does not answer in time is made in memory instead (docs/adr, ADR 0065).
  const rateLimitRedis = deps.redisUrl
    ? new Redis(deps.redisUrl, { maxRetriesPerRequest: 1, commandTimeout: RATE_LIMIT_REDIS_TIMEOUT_MS })
    : undefined;
  const rateLimitStore = new RateLimitStore({ redis: rateLimitRedis, keyPrefix: deps.rateLimitPrefix ?? "router:rl", log: deps.log });
  await rateLimitStore.ready(RATE_LIMIT_REDIS_WAIT_MS);
  // The console's MCP tools call this gateway's routes (any replica) for the client that called /mcp.
  const selfCalls = new SelfCallTokens(deps.secrets.ROUTER_INTERNAL_SECRET, deps.clock);
  const rateLimits = new GatewayRateLimits({
    store: rateLimitStore,
    limits: limitTable(deps.rateLimits),
    trust: trustedProxies(deps.trustedProxies ?? []),
    onRefused: metrics.rateLimited,
    selfCalls,
  });
  // Every management route, forwarded ones included, is counted per credential once its principal is known.
  const manageDeps = { keys: authDeps, sessions, csrfSecret, rateLimit: rateLimits.credential("management") };
  const manage = createManagementAuth(manageDeps);

  // A token count takes what a Messages request takes (Anthropic's 32 MB).
  const app = createHttpApp({
    log: deps.log,
    ownBodyPaths: [CONSOLE_MCP.path, ...UNREAD_BODY_PATHS],
    bodyLimits: { [COUNT_TOKENS_PATH]: MESSAGES_BODY_LIMIT },
    // The public edge: a caller's own x-request-id is never taken (docs/adr, ADR 0120).
    requestIds: "issue",
  });
  app.use(metrics.httpMiddleware());
  const drain = new Drain();
  app.use(
    healthRoutes({
      db: deps.db,
      log: deps.log,
      version: deps.version,
      rateLimiting: () => rateLimits.health(),
      draining: () => drain.isDraining,
    }),
  );
  const budgetWrites = new RecentBudgetWrites(deps.clock);
  const ledgerPort = grpcLedgerPort(deps.ledger, {
    deadlineMs: grpcDeadlineMs,
    freshBudgets: (orgId) => budgetWrites.fresh(orgId),
    admitStreams: admitStreamsFor(deps.ledger, deps.ledgerAdmitStreams ?? DEFAULT_ADMIT_STREAMS),
    log: deps.log,
  });
  const closings = new HoldClosings({
    send: (batch) => ledgerPort.closeHolds(batch),
    log: deps.log,
    renewMs: deps.holdRenewMs,
  });
  metrics.watchClosings(() => closings.size);
  const leaseUseMs = deps.leaseUseMs ?? 1000;
  const leases =
    leaseUseMs > 0
      ? new SpendLeases({
          lease: (req) => ledgerPort.lease(req),
          closings,
          clock: deps.clock,
          log: deps.log,
          useMs: leaseUseMs,
          onLeaseAdmission: metrics.leaseAdmitted,
          onLeaseCall: metrics.leaseCalled,
        })
      : undefined;
  const budgetSubjects = new BudgetSubjects(ledgerPort, deps.clock, deps.log);
  const credits = new CreditStanding(ledgerPort, deps.clock, deps.log);
  const rateTiers = deps.rateTiers?.length
    ? new InferenceRateTiers({ store: rateLimitStore, tiers: deps.rateTiers, credits, onRefused: () => metrics.rateLimited("inference") })
    : undefined;
  const contentFilters = new ContentFilters(metrics.contentFilterMatched);
  // Stored responses (`store` on POST /v1/responses): sealed under the master key, purged past retention.
  const storedResponses = new StoredResponses({
    db: deps.db,
    clock: deps.clock,
    masterKey: deps.secrets.ROUTER_MASTER_KEY,
    retentionDays: deps.storedResponseDays,
  });
  const stopPurging = storedResponses.startPurging(deps.log);
  const accountPrivacy = new AccountPrivacy({
    routingUrl: deps.routingUrl,
    identityKey,
    clock: deps.clock,
    log: deps.log,
  });
  const storagePolicy = new StoragePolicy({ logging: consolePort, clock: deps.clock, privacy: accountPrivacy });
  const plans = cachedRoutingPort(grpcRoutingPort(deps.routing, { deadlineMs: grpcDeadlineMs }), deps.clock, {
    ttlMs: deps.planCacheMs ?? 1000,
  });
  const ingresses = ingressesWith({ responses: storedResponses, policy: storagePolicy, log: deps.log });
  // Chat completions also take a dashboard session whose role may spend (config:write, as making a
  // key does); the other inference routes take keys only (docs/adr, ADR 0092).
  const keyOnly = createCallerResolver(authDeps, { allow: ["inference"] });
  const keyOrSession = createKeyOrSessionResolver(manageDeps, "config:write");
  const inferenceApis = inferenceRoutes({
    resolveCaller: (req, res) => (pathOf(req) === CHAT_COMPLETIONS_PATH ? keyOrSession : keyOnly)(req, res),
    routing: plans,
    ledger: ledgerPort,
    closings,
    leases,
    budgetSubjects,
    credits,
    rateTiers,
    contentFilters,
    credentials,
    bus: deps.bus,
    log: deps.log,
    clock: deps.clock,
    recent,
    upstream,
    providerBaseUrls: deps.providerBaseUrls,
    keepaliveMs: deps.keepaliveMs,
    metrics,
    drain,
  }, ingresses);
  // Guardrails are cached by routing, not here: reported null (docs/adr, ADR 0076). `budgets` is this
  // gateway's copy of which workspaces and agents have a budget (the ledger keeps the budgets).
  app.use(
    diagnosticsRoute({
      db: deps.db,
      log: deps.log,
      manage,
      version: deps.version,
      rateLimiting: () => rateLimits.health(),
      caches: {
        auth: () => authCache.stats(),
        budgets: () => budgetSubjects.stats(),
        byok: () => credentials.stats(),
        plans: () => plans.stats(),
      },
      routingUrl: deps.routingUrl,
      identityKey,
    }),
  );
  app.use(
    countTokensRoutes({
      authenticate,
      chat: { credentials, routing: plans, clock: deps.clock, providerBaseUrls: deps.providerBaseUrls },
      client: upstream.client,
      limit: rateLimits.credential("count_tokens"),
      openCircuits: () => upstream.breakers.openEndpoints(),
      log: deps.log,
    }),
  );
  app.use(
    previewRoutes({
      // Side-effect free: any role's session may preview (as every role reads the routing configuration).
      resolveCaller: createKeyOrSessionResolver(manageDeps, "read"),
      chat: { credentials, routing: plans, ledger: ledgerPort, budgetSubjects, credits, contentFilters, clock: deps.clock },
      limit: rateLimits.credential("route_preview"),
      openCircuits: () => upstream.breakers.openEndpoints(),
    }),
  );
  app.use(regionRoute({ headers: deps.regionHeaders ?? {}, publicLimit: rateLimits.publicRateLimit("region") }));
  const consoleUrl = deps.consoleUrl ?? DEFAULT_CONSOLE_HTTP_URL;
  // Answered here: a CORS preflight carries nothing for the console to read.
  app.options(PKCE_EXCHANGE_PATH, pkceExchangePreflight);
  app.use(consolePageRoutes({ proxy, consoleUrl, limits: { csp_report: rateLimits.publicRateLimit("csp_report"), openapi: rateLimits.publicRateLimit("openapi") } }));
  app.use(consoleMcpRoutes({ authenticate, proxy, consoleUrl, selfCalls, addressOf: (req) => rateLimits.addressOf(req) }));
  // Answers generations this gateway just served; any other id falls through to the proxy.
  app.use(generationRoutes({ authenticate: inference, recent }));
  app.use(storedResponseRoutes({ authenticate: inference, responses: storedResponses, log: deps.log }));
  const responsesIngress = ingresses.find((i): i is Ingress => i.kind === "chat" && i.name === "responses");
  if (responsesIngress) app.use(inputTokensRoutes({ authenticate: inference, responses: responsesIngress, limit: rateLimits.credential("count_tokens"), log: deps.log }));
  app.use(runawayFlagRoutes({ authCache, manage, proxy, identityKey, runawayUrl }));
  app.use(
    proxyRoutes({
      identity: consolePort,
      // The console's answer to a change names the keys and sessions it made stale: forgotten here
      // before the answer goes out, and on every other replica through Redis.
      onEvictions: async ({ keys, sessions: ended }) => {
        await Promise.all([authCache.evict(keys), sessions.evict(ended)]);
      },
      onBudgetWrite: (orgId) => {
        budgetWrites.written(orgId);
        budgetSubjects.invalidate(orgId);
        leases?.forgetOrganisation(orgId);
      },
      authenticate,
      manage,
      proxy,
      identityKey,
      activityUrl: deps.activityUrl,
      alertsUrl: deps.alertsUrl,
      routingUrl: deps.routingUrl,
      ledgerUrl: deps.ledgerUrl,
      reportsUrl: deps.reportsUrl,
      broadcastUrl: deps.broadcastUrl,
      runawayUrl,
      consoleUrl,
      onCredentialWrite: (orgId) => credentials.invalidate(orgId),
      onLoggingWrite: (orgId) => storagePolicy.loggingChanged(orgId),
      onRoutingWrite: (orgId) => {
        plans.forgetOrganisation(orgId);
        accountPrivacy.invalidate(orgId);
      },
      catalogLimit: rateLimits.publicRateLimit("catalog"),
      creditFeesLimit: rateLimits.publicRateLimit("credit_fees"),
      paymentEventsLimit: rateLimits.publicRateLimit("payment_events"),
      // The probes' reports share the uptime figure's per-address limit: one a minute per region.
      uptimeLimit: rateLimits.publicRateLimit("uptime"),
      signInLimits: {
        authExchange: rateLimits.publicRateLimit("auth_exchange"),
        invitationLookup: rateLimits.publicRateLimit("invitation_lookup"),
        pkce: rateLimits.publicRateLimit("pkce"),
        walletChallenge: rateLimits.publicRateLimit("wallet_challenge"),
      },
      exportLimit: rateLimits.credentialRateLimit("activity_export"),
    }),
  );
  finishApp(app, deps.log);
  // A runaway flag that pauses a key reaches one replica (the group is shared); that one has the
  // console pause the key and evicts it from every replica's auth cache.
  const runawayFlags = await subscribeRunawayFlags(deps.bus, {
    identity: consolePort,
    log: deps.log,
    authCache,
    onFlag: metrics.runawayFlagHandled,
  });

  // The inference routes are the hot path: Node serves them directly; express serves every other route.
  const root = routeAhead(inferenceApis, app);
  // Spans are named by the path without ids or queries: only the chat path and the first segments.
  const spanRoute = (req: IncomingMessage) => (req.url ?? "").split("?")[0]?.split("/").slice(0, 3).join("/") ?? "";
  const server = await listen(drain.track(tracedListener(root, spanRoute)), deps.port, deps.host).catch(async (err: unknown) => {
    await runawayFlags.close();
    stopPurging();
    throw err;
  });
  deps.log.info({ port: server.port }, "gateway.http.listening");
  // Metrics are auxiliary: a port that cannot be bound is logged (the scraper reports the target
  // down) and never stops the gateway from serving.
  const admin =
    deps.metricsPort === undefined
      ? undefined
      : await startMetricsServer(metrics.registry, { port: deps.metricsPort, host: deps.metricsHost, log: deps.log }).catch(
          (err: unknown) => {
            deps.log.error({ err, port: deps.metricsPort }, "gateway.metrics.listen_failed");
            return undefined;
          },
        );
  if (admin) deps.log.info({ port: admin.port }, "gateway.metrics.listening");
  return {
    port: server.port,
    routes: [...inferenceApis.map((r) => ({ method: "post", path: r.path })), ...servedRoutes(app)],
    metricsPort: admin?.port,
    closeTimeoutMs: (deps.drainGraceMs ?? DEFAULT_DRAIN_GRACE_MS) + CLOSINGS_FLUSH_MS + CLOSE_CHANNELS_MS,
    drainProgress: () => drain.progress(),
    hurryClose: () => drain.hurry(),
    async close() {
      // Drain: no new connections, readiness fails, requests in flight finish (or are cut at the end
      // of the grace), and the settlements and events they leave are handed on, before any channel closes.
      server.server.close();
      server.server.closeIdleConnections();
      const idleSweep = setInterval(() => server.server.closeIdleConnections(), 200);
      const inFlight = drain.inFlight;
      const { cut } = await drain.run(deps.drainGraceMs ?? DEFAULT_DRAIN_GRACE_MS);
      clearInterval(idleSweep);
      deps.log.info({ inFlight, cut }, "gateway.drained");
      await Promise.all([server.close(), admin?.close(), runawayFlags.close()]);
      stopPurging();
      // Unspent lease parts go back, and served requests' spend reaches the ledger, before the process goes.
      leases?.close();
      await closings.flush(CLOSINGS_FLUSH_MS);
      closings.close();
      await Promise.all([proxy.close(), credentials.close(), upstream.close(), ledgerPort.close()]);
      sessions.close();
      authCache.close();
      rateLimitStore.close();
      redis?.disconnect();
      rateLimitRedis?.disconnect();
    },
  };
}
