import type { IncomingMessage } from "node:http";
import { CONSOLE_MCP, SELF_CALL_HEADER } from "@router/management-api";
import { Router, type Request, type Response } from "express";
import type { Authenticate } from "../auth/authenticate";
import type { SelfCallTokens } from "../rate-limits/self-calls";
import type { UpstreamProxy, UpstreamTarget } from "./upstream-proxy";

export interface ConsoleMcpDeps {
  authenticate: Authenticate;
  proxy: UpstreamProxy;
  consoleUrl: string;
  selfCalls: SelfCallTokens;
  /** The client address a request counts for on the per-address limits. */
  addressOf: (req: IncomingMessage) => string;
}

/**
 * `/mcp`, as `CONSOLE_MCP` describes it: the console serves the MCP server; the gateway
 * authenticates `POST` with an inference key before anything reaches the console, then forwards the
 * body unread with the caller's headers and a self-call token naming the client's address (the
 * tools call this gateway's routes as the caller, and any replica counts per-address limits for that
 * client). Other methods reach the console as they are, for its 405.
 */
export function consoleMcpRoutes(deps: ConsoleMcpDeps): Router {
  const router = Router();
  const target: UpstreamTarget = { service: "console", baseUrl: deps.consoleUrl, passHeaders: CONSOLE_MCP.passHeaders };
  router[CONSOLE_MCP.method](CONSOLE_MCP.path, deps.authenticate({ allow: [CONSOLE_MCP.access] }), async (req: Request, res: Response) => {
    const addHeaders = CONSOLE_MCP.selfCall ? { [SELF_CALL_HEADER]: deps.selfCalls.issue(deps.addressOf(req)) } : undefined;
    await deps.proxy.forward(req, res, { ...target, addHeaders }, null);
  });
  router.all(CONSOLE_MCP.path, async (req: Request, res: Response) => deps.proxy.forward(req, res, { service: "console", baseUrl: deps.consoleUrl }, null));
  return router;
}
