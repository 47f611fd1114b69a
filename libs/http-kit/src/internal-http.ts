import type { RequestHandler } from "express";
import type { Registry } from "prom-client";
import type { Logger } from "@router/logging";
import { createHttpApp, finishApp, listen, requireIdentity, type RunningHttpServer } from "./app";
import type { IdentityPublicKeys } from "./identity";
import { metricsRoute } from "./metrics";

export interface InternalHttpOptions {
  log: Logger;
  /** The service's own metrics, served at `GET /metrics`. */
  registry: Registry;
  /** The edge's public keys: verify the identity the gateway signs and forwards. */
  identityKeys: IdentityPublicKeys;
  /** The service's routes; each request reaching them carries a verified `req.identity`. */
  routes: RequestHandler[];
  /**
   * Routes served without the gateway-signed identity, ahead of it: ones the gateway forwards
   * without a caller (public, or authenticated by their own scheme, such as a signed processor event).
   */
  openRoutes?: RequestHandler[];
  /** Paths whose routes read their own body, or none at all (`createHttpApp`). */
  ownBodyPaths?: readonly string[];
  /**
   * Whether the service can serve (its database answers): `GET /health` is 503 while it says no, so
   * readiness takes the pod out of rotation until it recovers. Always ready without it.
   */
  ready?: () => Promise<boolean>;
  /** 0 picks a free port. */
  port: number;
  host?: string;
}

/**
 * Starts the HTTP server of an internal service that the gateway forwards management routes to:
 * `GET /health` and `GET /metrics` open (the port is internal and the scraper signs nothing), then
 * `openRoutes`, then `routes` behind the gateway-signed identity, then the 404 and the error envelope.
 */
export function startInternalHttp(opts: InternalHttpOptions): Promise<RunningHttpServer> {
  const app = createHttpApp({ log: opts.log, ownBodyPaths: opts.ownBodyPaths });
  const ready = opts.ready;
  app.get("/health", async (_req, res) => {
    if (!ready || (await ready())) res.json({ status: "ok" });
    else res.status(503).json({ status: "unavailable", database: "unreachable" });
  });
  app.get("/metrics", metricsRoute(opts.registry));
  for (const route of opts.openRoutes ?? []) app.use(route);
  app.use(requireIdentity(opts.identityKeys));
  for (const route of opts.routes) app.use(route);
  finishApp(app, opts.log);
  return listen(app, opts.port, opts.host ?? "127.0.0.1");
}
