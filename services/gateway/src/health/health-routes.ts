import { Router, type Request, type Response } from "express";
import { DatabaseReadiness, type Db } from "@router/db";
import type { Logger } from "@router/logging";

export interface HealthDeps {
  db: Db;
  log: Logger;
  version: string;
  /**
   * Where rate limits count: `{store: "redis", shared: true}` when every instance shares them,
   * `shared: false` while Redis does not answer (each instance counts in memory meanwhile);
   * `{store: "memory", shared: false}` without Redis.
   */
  rateLimiting: () => { store: "memory" | "redis"; shared: boolean };
  /** True once the gateway is stopping: readiness fails at once so the load balancer stops sending. */
  draining?: () => boolean;
}

/**
 * `GET /health` (public): 200 while the database answers (a probe reused for a second), 500 when it does not; `GET /readyz` is the
 * same check for Kubernetes readiness (a gateway that cannot reach its database leaves the load
 * balancer). `GET /livez` is liveness: it never touches the database, so a database blip takes
 * gateways out of rotation without restarting every one of them.
 */
export function healthRoutes(deps: HealthDeps): Router {
  const router = Router();
  // Public: however many callers ask, the database answers one probe a second.
  const database = new DatabaseReadiness(deps.db);
  const databaseCheck = async (_req: Request, res: Response) => {
    const body = { version: deps.version, rate_limiting: deps.rateLimiting() };
    if (await database.reachable()) {
      res.json({ status: "ok", ...body });
    } else {
      deps.log.error({ err: database.lastError }, "gateway.health.database_unreachable");
      res.status(500).json({ status: "error", ...body });
    }
  };
  // Two routes, not one with a path list: the metrics label each by its own pattern.
  router.get("/health", databaseCheck);
  router.get("/readyz", async (req: Request, res: Response) => {
    if (deps.draining?.()) {
      res.status(503).json({ status: "draining", version: deps.version, rate_limiting: deps.rateLimiting() });
      return;
    }
    await databaseCheck(req, res);
  });
  router.get("/livez", (_req: Request, res: Response) => {
    res.json({ status: "ok", version: deps.version });
  });
  return router;
}
