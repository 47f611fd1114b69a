import type { Db } from "@router/db";
import { Router, type Request, type RequestHandler, type Response } from "express";
import { signIdentity, type Identity, type IdentitySigningKey } from "@router/http-kit";
import type { Caller } from "../auth/caller";
import { KEY_PREFIXES } from "../keys/key-secret";
import { requireCaller, type Authenticate } from "../auth/authenticate";
import type { Manage } from "../auth/management-auth";
import { principalIdentity, requirePrincipal } from "../auth/principal";
import { namedWorkspace } from "./named-workspace";
import { organisationName } from "./organisation-name";
import type { UpstreamProxy, UpstreamTarget } from "./upstream-proxy";

export interface ProxyRoutesDeps {
  /** The gateway's own store: a named workspace is checked against the caller's organisation. */
  db: Db;
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
  /** Per-client-address limit on the public catalog routes. */
  catalogLimit: RequestHandler;
  /** Per-client-address limit on the public fee schedule. */
  creditFeesLimit: RequestHandler;
  /** Per-client-address limit on the payment processor's events. */
  paymentEventsLimit: RequestHandler;
  /** Per-credential limit on the CSV export, after the management authentication (and its limit). */
  exportLimit: RequestHandler;
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

/** The header the payment processor (Stripe) signs its events in, checked by the ledger. */
const PAYMENT_SIGNATURE_HEADER = "stripe-signature";

/** Routes whose bodies the gateway forwards unread: see `proxyRoutes`. */
export const CREDIT_OWN_BODY_PATHS = ["/v1/credits/checkout", "/v1/billing/webhook"] as const;

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
 * Routes other services own, forwarded after authentication with the signed identity header:
 * activity (usage, CSV export, generation records), routing's account defaults, presets, guardrails
 * and privacy policy, the ledger's workspace budgets, agents and runs, reports (branding and client
 * reports), alerts (channels, test alerts, deliveries), broadcast destinations, runaway's settings,
 * the ledger's credits (and the public fee schedule and payment-processor events), and the public
 * catalog (routing). The gateway only authenticates management callers here (every
 * role may read); the owning service checks the role against the permission table.
 */
export function proxyRoutes(deps: ProxyRoutesDeps): Router {
  const router = Router();
  const activity: UpstreamTarget = { service: "activity", baseUrl: deps.activityUrl };
  const routing: UpstreamTarget = { service: "routing", baseUrl: deps.routingUrl };
  const ledger: UpstreamTarget = { service: "ledger", baseUrl: deps.ledgerUrl };
  const reports: UpstreamTarget = { service: "reports", baseUrl: deps.reportsUrl };
  const alerts: UpstreamTarget = { service: "alerts", baseUrl: deps.alertsUrl };
  const broadcast: UpstreamTarget = { service: "broadcast", baseUrl: deps.broadcastUrl };
  const runaway: UpstreamTarget = { service: "runaway", baseUrl: deps.runawayUrl };

  // Signed with the wall clock, not the injected one: the receiving process checks its age.
  const forwardAs = (target: UpstreamTarget, identityOf: (res: Response) => Identity): RequestHandler =>
    async (req: Request, res: Response) => {
      await deps.proxy.forward(req, res, target, await signIdentity(identityOf(res), deps.identityKey));
    };
  const asPrincipal = (res: Response): Identity => {
    const identity = principalIdentity(requirePrincipal(res));
    const workspace = res.locals.workspace as Identity["workspace"];
    const orgName = res.locals.orgName as Identity["orgName"];
    return { ...identity, ...(workspace ? { workspace } : {}), ...(orgName !== undefined ? { orgName } : {}) };
  };
  const workspaceFilter = namedWorkspace(deps.db, { query: "workspace" });
  const asInferenceKey = (res: Response) => keyIdentity(requireCaller(res));
  const open =
    (target: UpstreamTarget): RequestHandler =>
    async (req: Request, res: Response) => {
      await deps.proxy.forward(req, res, target, null);
    };

  const management = deps.manage("read");
  router.get("/v1/activity/export", management, deps.exportLimit, workspaceFilter, forwardAs(activity, asPrincipal));
  router.all(["/v1/activity", "/v1/activity/*rest"], management, workspaceFilter, forwardAs(activity, asPrincipal));
  router.get("/v1/generation", deps.authenticate({ allow: ["inference"] }), forwardAs(activity, asInferenceKey));
  router.get("/v1/generation/:id/content", management, forwardAs(activity, asPrincipal));
  // After a routing write, this gateway plans the organisation's next request afresh (routing has
  // already dropped its own copy, on every replica), so the change binds on the very next request.
  const routingWritten = afterWrite(deps.onRoutingWrite);
  router.all("/v1/routing/defaults", management, routingWritten, forwardAs(routing, asPrincipal));
  // A workspace's budgets: reading an unknown one lists none (the ledger scopes by organisation),
  // while a write must name a workspace of the caller's organisation (404 otherwise). The gateway
  // serves /v1/workspaces and /v1/workspaces/{id} itself; only these sub-paths go to the ledger.
  router.get("/v1/workspaces/:id/budgets", management, forwardAs(ledger, asPrincipal));
  // After a budget write, this gateway's copy of which budgets exist is read again at once (other
  // replicas within its few seconds), so the next request is admitted by the ledger.
  const budgetWritten = afterWrite(deps.onBudgetWrite);
  router.all(
    "/v1/workspaces/:id/budgets/:interval",
    management,
    namedWorkspace(deps.db, { param: "id" }),
    budgetWritten,
    forwardAs(ledger, asPrincipal),
  );
  router.get("/v1/agents", management, forwardAs(ledger, asPrincipal));
  // An agent budget scoped to a workspace names it in the body (set) or the query (delete).
  router.all(
    "/v1/agents/:agent/budgets/:interval",
    management,
    namedWorkspace(deps.db, { body: "workspace_id" }),
    namedWorkspace(deps.db, { query: "workspace_id" }),
    budgetWritten,
    forwardAs(ledger, asPrincipal),
  );
  // Reports show the organisation's and the workspace's current names, which only the gateway holds.
  const orgName = organisationName(deps.db);
  router.get("/v1/reports/branding", management, orgName, forwardAs(reports, asPrincipal));
  router.put("/v1/reports/branding", management, orgName, forwardAs(reports, asPrincipal));
  router.get("/v1/reports/workspaces/:id", management, namedWorkspace(deps.db, { param: "id" }), orgName, forwardAs(reports, asPrincipal));
  // Alert channels, test alerts and the delivery log; /v1/alerts/settings and /runaway belong to runaway.
  router.all(["/v1/alerts/channels", "/v1/alerts/channels/*rest", "/v1/alerts/deliveries"], management, forwardAs(alerts, asPrincipal));
  router.all(["/v1/broadcast/destinations", "/v1/broadcast/destinations/*rest"], management, forwardAs(broadcast, asPrincipal));
  router.all(["/v1/presets", "/v1/presets/*rest"], management, routingWritten, forwardAs(routing, asPrincipal));
  router.all(["/v1/guardrails", "/v1/guardrails/*rest"], management, routingWritten, forwardAs(routing, asPrincipal));
  router.all("/v1/privacy", management, routingWritten, forwardAs(routing, asPrincipal));
  router.all("/v1/privacy/preview", management, forwardAs(routing, asPrincipal));
  // What a runaway flag does; the flag list itself adds key state (runaway/runaway-flag-routes.ts).
  router.all("/v1/alerts/settings", management, forwardAs(runaway, asPrincipal));

  // Runs: the agent's inference key opens, reads, closes and resumes its organisation's runs; a
  // management key or session reads, closes and resumes them (the ledger checks the role, and
  // refuses it an open).
  const inference = deps.authenticate({ allow: ["inference"] });
  const keyOrManagement: RequestHandler = (req, res, next) => {
    const bearer = req.headers.authorization?.replace(/^Bearer\s+/i, "") ?? "";
    return bearer.startsWith(KEY_PREFIXES.inference) ? inference(req, res, next) : management(req, res, next);
  };
  const asRunCaller = (res: Response): Identity => (res.locals.principal ? asPrincipal(res) : asInferenceKey(res));
  router.all(["/v1/runs", "/v1/runs/*rest"], keyOrManagement, forwardAs(ledger, asRunCaller));
  // Credits: the balance, purchases and checkout (the ledger checks billing:read and billing:write).
  // Checkout and the processor's events reach the ledger with their bodies unread
  // (`CREDIT_OWN_BODY_PATHS`): checkout is refused before its body is read, and the processor signs
  // the exact bytes.
  router.get(["/v1/credits", "/v1/credits/purchases", "/v1/credits/purchases/:id/document"], management, forwardAs(ledger, asPrincipal));
  router.post("/v1/credits/checkout", management, forwardAs(ledger, asPrincipal));
  router.get("/v1/credits/fees", deps.creditFeesLimit, open(ledger));
  const processor: UpstreamTarget = { ...ledger, passHeaders: [PAYMENT_SIGNATURE_HEADER] };
  router.post("/v1/billing/webhook", deps.paymentEventsLimit, open(processor));

  // Anthropic's SDKs send `anthropic-version`: routing answers them in Anthropic's Models API shape.
  const catalog: UpstreamTarget = { ...routing, passHeaders: ["anthropic-version"] };
  router.get(["/v1/models", "/v1/models/*rest", "/v1/providers"], deps.catalogLimit, open(catalog));
  return router;
}
