import { Router } from "express";
import type { Db } from "@router/db";
import { identityOf, parseInput } from "@router/http-kit";
import type { Clock } from "@router/money";
import { requirePermission } from "@router/access";
import { decodeCursor, toPage } from "../paging/keyset";
import { queryOf, windowStart } from "../paging/query-params";
import { listAttempts } from "./attempt-queries";
import { renderAttempt } from "./attempt-row";
import { activity } from "@router/management-api";

const upstreamQuery = activity.upstreamQuery;

export interface UpstreamRoutesDeps {
  db: Db;
  clock: Clock;
}

export function upstreamRoutes(deps: UpstreamRoutesDeps): Router {
  const router = Router();

  router.get("/v1/activity/upstream", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "usage:read");
    const q = parseInput(upstreamQuery, queryOf(req.query), "");
    const position = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
    const rows = await listAttempts(
      deps.db,
      identity.orgId,
      {
        since: windowStart(deps.clock.now(), q.days),
        requestId: q.request,
        provider: q.provider,
        status: q.status,
      },
      position,
      q.limit + 1,
    );
    res.json(toPage(rows, q.limit, renderAttempt));
  });

  return router;
}
