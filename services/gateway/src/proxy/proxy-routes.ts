import type { IncomingHttpHeaders } from "node:http";
import { CONSOLE_PAGES, MANAGEMENT_ROUTES, OWNED_FAMILIES, type Access, type Owner } from "@router/management-api";
import { Router, type Request, type RequestHandler, type Response } from "express";
import { signIdentity, type Identity, type IdentitySigningKey } from "@router/http-kit";
import type { Caller } from "../auth/caller";
import { evictionsOf, type CacheEvictions } from "@router/http-kit";
import { KEY_PREFIXES } from "@router/api-keys";
import type { IdentityDirectory } from "../console/console-port";
import { pkceExchangeAnyOrigin } from "./pkce-cors";
import { requireCaller, type Authenticate } from "../auth/authenticate";
import type { Manage } from "../auth/management-auth";
import { principalIdentity, requirePrincipal } from "../auth/principal";
import { namedWorkspace } from "./named-workspace";
import { organisationName } from "./organisation-name";
import type { UpstreamProxy, UpstreamTarget } from "./upstream-proxy";

export interface ProxyRoutesDeps {
  /** The console's answers: a named workspace is checked against the caller's organisation, and an organisation's name. */
  identity: Pick<IdentityDirectory, "findWorkspace" | "organisationName">;
  /**
   * Called with the key and session cache entries the console's answer names as stale (a key
   * revoked, a member removed), before the answer is passed on.
   */
  onEvictions?: (evictions: CacheEvictions) => Promise<void>;
  authenticate: Authenticate;
  manage: Manage;
  proxy: UpstreamProxy;
  identityKey: IdentitySigningKey;
  activityUrl: string;
  alertsUrl: string;
  routingUrl: string;
  ledgerUrl: string;
  reportsUrl: string;
  broadcastUrl: string;
  runawayUrl: string;
  consoleUrl: string;
  /** Per-client-address limit on the public catalog routes. */
  catalogLimit: RequestHandler;
  /** Per-client-address limit on the public fee schedule. */
  creditFeesLimit: RequestHandler;
  /** Per-client-address limit on the payment processor's events. */
  paymentEventsLimit: RequestHandler;
  /** Per-client-address limit on the uptime figure and the probes' reports. */
  uptimeLimit: RequestHandler;
  /** Per-client-address limits on the console's public sign-in routes. */
  signInLimits: { authExchange: RequestHandler; invitationLookup: RequestHandler; pkce: RequestHandler; walletChallenge: RequestHandler };
  /** Per-credential limit on the CSV export, after the management authentication (and its limit). */
  exportLimit: RequestHandler;
  /** Called once a logging-settings write was answered, with the organisation (the stored-response policy's cache). */
  onLoggingWrite?: (orgId: string) => void;
  /** Called once a provider-credential write was answered, with the organisation (the dispatch view's cache). */
  onCredentialWrite?: (orgId: string) => void;
  /** Called once a budget write was answered, with the organisation (the gateway's budget-subjects cache). */
  onBudgetWrite?: (orgId: string) => void;
  /**
   * Called once a write to the organisation's routing configuration (defaults, presets, guardrails
   * and their assignments, privacy policy) was answered: the gateway's plan and privacy caches.
   */
  onRoutingWrite?: (orgId: string) => void;
}

/**
 * Calls `hook` with the caller's organisation once a write (any method but GET and HEAD) has been
 * answered. `finish` fires when the answer is handed to the socket, before the client can send its
 * next request.
 */
function afterWrite(hook: ((orgId: string) => void) | undefined): RequestHandler {
  return (req, res, next) => {
    if (hook && req.method !== "GET" && req.method !== "HEAD") res.once("finish", () => hook(requirePrincipal(res).orgId));
    next();
  };
}

/** Routes whose bodies the gateway forwards unread (the owner reads the bytes itself). */
export const UNREAD_BODY_PATHS: readonly string[] = [
  ...MANAGEMENT_ROUTES.filter((r) => r.bodyUnread).map((r) => r.path),
  ...CONSOLE_PAGES.filter((p) => p.bodyUnread).flatMap((p) => p.paths),
];

/**
 * The identity an owning service sees for an inference key: no person and no management role, even
 * when the key has a member (who matters to routing's guardrails only, through Plan).
 */
export function keyIdentity(caller: Caller): Identity {
  return {
    orgId: caller.orgId,
    credential: caller.key.class,
    keyHash: caller.key.hash,
    keyName: caller.key.name,
    workspaceId: caller.key.workspaceId,
    // Roles belong to management callers; an inference key gets the least one.
    role: "readonly",
    userId: null,
    operator: caller.operator,
  };
}

/**
 * What the gateway adds to a route beyond its description, by route key (`PUT /v1/privacy`) or a
 * family's first path: checks and limits that run after authentication, and hooks on the answer.
 */
export type ProxyExtras = Record<string, readonly RequestHandler[]>;

export function proxyExtras(deps: ProxyRoutesDeps): ProxyExtras {
  // A named workspace filter must be one of the caller's organisation (404 otherwise).
  const workspaceFilter = namedWorkspace(deps.identity, { query: "workspace" });
  // After a routing write, this gateway plans the organisation's next request afresh (routing has
  // already dropped its own copy, on every replica), so the change binds on the very next request.
  const routingWritten = afterWrite(deps.onRoutingWrite);
  // After a budget write, this gateway's copy of which budgets exist is read again at once (other
  // replicas within its few seconds), so the next request is admitted by the ledger.
  const budgetWritten = afterWrite(deps.onBudgetWrite);
  // After a credential write, this gateway reads the organisation's credentials from the console
  // again on its next request (other replicas within their few seconds).
  const credentialWritten = afterWrite(deps.onCredentialWrite);
  const loggingWritten = afterWrite(deps.onLoggingWrite);
  // A workspace's budgets: reading an unknown one lists none (the ledger scopes by organisation),
  // while a write must name a workspace of the caller's organisation (404 otherwise).
  const workspaceBudgetWrite = [namedWorkspace(deps.identity, { param: "id" }), budgetWritten];
  // An agent budget scoped to a workspace names it in the body (set) or the query (delete).
  const agentBudgetWrite = [namedWorkspace(deps.identity, { body: "workspace_id" }), namedWorkspace(deps.identity, { query: "workspace_id" }), budgetWritten];
  // Reports show the organisation's and the workspace's current names, which only the gateway holds.
  const orgName = organisationName(deps.identity);
  const extras: Record<string, RequestHandler[]> = {
    "GET /v1/activity/export": [deps.exportLimit, workspaceFilter],
    "/v1/activity": [workspaceFilter],
    "PUT /v1/workspaces/:id/budgets/:interval": workspaceBudgetWrite,
    "DELETE /v1/workspaces/:id/budgets/:interval": workspaceBudgetWrite,
    "PUT /v1/agents/:agent/budgets/:interval": agentBudgetWrite,
    "DELETE /v1/agents/:agent/budgets/:interval": agentBudgetWrite,
    "GET /v1/reports/branding": [orgName],
    "PUT /v1/reports/branding": [orgName],
    "GET /v1/reports/workspaces/:id": [namedWorkspace(deps.identity, { param: "id" }), orgName],
    "/v1/presets": [routingWritten],
    "PUT /v1/logging": [loggingWritten],
    "POST /v1/provider-keys": [credentialWritten],
    "PATCH /v1/provider-keys/:id": [credentialWritten],
    "DELETE /v1/provider-keys/:id": [credentialWritten],
    "/v1/guardrails": [routingWritten],
    "GET /v1/credits/fees": [deps.creditFeesLimit],
    "GET /v1/status/uptime": [deps.uptimeLimit],
    "POST /v1/status/probes": [deps.uptimeLimit],
    "POST /v1/billing/webhook": [deps.paymentEventsLimit],
    "POST /v1/auth/exchange": [deps.signInLimits.authExchange],
    "POST /v1/invitations/lookup": [deps.signInLimits.invitationLookup],
    "GET /v1/auth/pkce": [deps.signInLimits.pkce],
    "POST /v1/auth/keys": [pkceExchangeAnyOrigin, deps.signInLimits.pkce],
    "POST /v1/auth/wallet/challenge": [deps.signInLimits.walletChallenge],
  };
  for (const r of MANAGEMENT_ROUTES) {
    if (r.owner === "activity" && r.access === "management") extras[r.key] ??= [workspaceFilter];
    if (r.owner === "routing" && r.access === "public") extras[r.key] = [deps.catalogLimit];
    // Every routing write changes the plan, but a preview, which saves nothing.
    if (r.owner === "routing" && r.access === "management" && r.method !== "get" && r.path !== "/v1/privacy/preview") extras[r.key] = [routingWritten];
  }
  return extras;
}

/**
 * Who the gateway lets through to a route, where it differs from the description's access: a
 * management caller reaches `POST /v1/runs` so that the ledger refuses it in its own words.
 */
const AUTHENTICATE_AS: Readonly<Record<string, Access>> = { "POST /v1/runs": "any" };

/**
 * Routes other services own (`@router/management-api`), forwarded after authentication with the
 * signed identity header: each description is one express route, with the extras above; then each
 * family an owner holds whole, so that an undescribed path under it reaches the owner's own 404.
 * The gateway only authenticates management callers here (every role may read); the owning
 * service checks the role against the permission table.
 */
export function proxyRoutes(deps: ProxyRoutesDeps): Router {
  const router = Router();
  const baseUrls: Record<Owner, string> = {
    activity: deps.activityUrl,
    routing: deps.routingUrl,
    ledger: deps.ledgerUrl,
    reports: deps.reportsUrl,
    alerts: deps.alertsUrl,
    broadcast: deps.broadcastUrl,
    runaway: deps.runawayUrl,
    console: deps.consoleUrl,
  };
  const onEvictions = deps.onEvictions;
  const evictStale = onEvictions
    ? async (headers: IncomingHttpHeaders) => {
        const evictions = evictionsOf(headers);
        if (evictions.keys.length > 0 || evictions.sessions.length > 0) await onEvictions(evictions);
      }
    : undefined;
  const targetOf = (owner: Owner, passHeaders: readonly string[] | undefined): UpstreamTarget => ({
    service: owner,
    baseUrl: baseUrls[owner],
    ...(passHeaders ? { passHeaders: [...passHeaders] } : {}),
    // The console owns keys and sessions: its answers name the cache entries a change made stale.
    ...(owner === "console" && evictStale ? { onAnswer: evictStale } : {}),
  });

  const asPrincipal = (res: Response): Identity => {
    const identity = principalIdentity(requirePrincipal(res));
    const workspace = res.locals.workspace as Identity["workspace"];
    const orgName = res.locals.orgName as Identity["orgName"];
    return { ...identity, ...(workspace ? { workspace } : {}), ...(orgName !== undefined ? { orgName } : {}) };
  };
  const asInferenceKey = (res: Response) => keyIdentity(requireCaller(res));
  // Runs: the agent's inference key, or a management key or session (the ledger checks the role).
  const asRunCaller = (res: Response): Identity => (res.locals.principal ? asPrincipal(res) : asInferenceKey(res));

  const management = deps.manage("read");
  const inference = deps.authenticate({ allow: ["inference"] });
  const keyOrManagement: RequestHandler = (req, res, next) => {
    const bearer = req.headers.authorization?.replace(/^Bearer\s+/i, "") ?? "";
    return bearer.startsWith(KEY_PREFIXES.inference) ? inference(req, res, next) : management(req, res, next);
  };
  // Public and processor routes carry no identity: the processor signs its events itself.
  const gates: Record<Access, { authenticate: RequestHandler[]; identity: ((res: Response) => Identity) | null }> = {
    public: { authenticate: [], identity: null },
    processor: { authenticate: [], identity: null },
    probe: { authenticate: [], identity: null },
    inference: { authenticate: [inference], identity: asInferenceKey },
    management: { authenticate: [management], identity: asPrincipal },
    any: { authenticate: [keyOrManagement], identity: asRunCaller },
  };
  // Signed with the wall clock, not the injected one: the receiving process checks its age.
  const forward =
    (target: UpstreamTarget, identityOf: ((res: Response) => Identity) | null): RequestHandler =>
    async (req: Request, res: Response) => {
      const identity = identityOf ? await signIdentity(identityOf(res), deps.identityKey) : null;
      await deps.proxy.forward(req, res, target, identity);
    };

  const extras = proxyExtras(deps);
  for (const r of MANAGEMENT_ROUTES) {
    if (r.serving !== "forwarded") continue;
    const gate = gates[AUTHENTICATE_AS[r.key] ?? r.access];
    router[r.method](r.path, ...gate.authenticate, ...(extras[r.key] ?? []), forward(targetOf(r.owner, r.passHeaders), gate.identity));
  }
  for (const family of OWNED_FAMILIES) {
    const gate = gates[family.access];
    const first = family.paths[0] ?? "";
    router.all([...family.paths], ...gate.authenticate, ...(extras[first] ?? []), forward(targetOf(family.owner, undefined), gate.identity));
  }
  return router;
}

/**
 * The console's pages for browsers (`@router/management-api`'s CONSOLE_PAGES): forwarded unauthenticated
 * and without an identity, passing on only the headers a page reads (the session cookie for `/`).
 */
export function consolePageRoutes(deps: { proxy: UpstreamProxy; consoleUrl: string; limits: Record<"csp_report" | "openapi", RequestHandler> }): Router {
  const router = Router();
  const limits = deps.limits;
  for (const page of CONSOLE_PAGES) {
    const target: UpstreamTarget = { service: "console", baseUrl: deps.consoleUrl, ...(page.passHeaders ? { passHeaders: [...page.passHeaders] } : {}) };
    const limit = page.limit ? [limits[page.limit]] : [];
    router[page.method]([...page.paths], ...limit, async (req: Request, res: Response) => deps.proxy.forward(req, res, target, null));
  }
  return router;
}
