import { Router, type Request, type RequestHandler, type Response } from "express";
import { signIdentity, type Identity } from "@router/http-kit";
import type { Caller } from "../auth/caller";
import { requireCaller, type Authenticate } from "../auth/authenticate";
import type { UpstreamProxy, UpstreamTarget } from "./upstream-proxy";

export interface ProxyRoutesDeps {
  authenticate: Authenticate;
  proxy: UpstreamProxy;
  internalSecret: string;
  activityUrl: string;
  routingUrl: string;
}

/** The identity an owning service sees for a key caller. A key with no person behind it acts as owner. */
export function keyIdentity(caller: Caller): Identity {
  return {
    orgId: caller.orgId,
    credential: caller.key.class,
    keyHash: caller.key.hash,
    keyName: caller.key.name,
    workspaceId: caller.key.workspaceId,
    role: "owner",
    userId: null,
    operator: caller.operator,
  };
}

/**
 * Routes other services own, forwarded after authentication with the signed identity header:
 * activity (usage, CSV export, generation records), routing's account defaults, and the public
 * catalog (routing).
 */
export function proxyRoutes(deps: ProxyRoutesDeps): Router {
  const router = Router();
  const activity: UpstreamTarget = { service: "activity", baseUrl: deps.activityUrl };
  const routing: UpstreamTarget = { service: "routing", baseUrl: deps.routingUrl };

  const signed =
    (target: UpstreamTarget): RequestHandler =>
    async (req: Request, res: Response) => {
      // Signed with the wall clock, not the injected one: the receiving process checks its age.
      const identity = await signIdentity(keyIdentity(requireCaller(res)), deps.internalSecret);
      await deps.proxy.forward(req, res, target, identity);
    };
  const open =
    (target: UpstreamTarget): RequestHandler =>
    async (req: Request, res: Response) => {
      await deps.proxy.forward(req, res, target, null);
    };

  const management = deps.authenticate({ allow: ["management"] });
  router.all(["/v1/activity", "/v1/activity/*rest"], management, signed(activity));
  router.get("/v1/generation", deps.authenticate({ allow: ["inference"] }), signed(activity));
  router.get("/v1/generation/:id/content", management, signed(activity));
  // Routing checks the role (reads: any role; writes: org:write) from the signed identity.
  router.route("/v1/routing/defaults").get(management, signed(routing)).put(management, signed(routing));

  router.get(["/v1/models", "/v1/models/*rest", "/v1/providers"], open(routing));
  return router;
}
