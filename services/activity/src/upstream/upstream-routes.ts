import { Router } from "express";
import type { Db } from "@router/db";
import { identityOf, parseInput } from "@router/http-kit";
import type { Clock } from "@router/money";
import { z } from "zod";
import { requirePermission } from "@router/access";
import { decodeCursor, toPage } from "../paging/keyset";
import { pagingParams, queryOf, textFilter, windowStart } from "../paging/query-params";
import { listAttempts } from "./attempt-queries";
import { renderAttempt } from "./attempt-row";

const upstreamQuery = z.object({
  ...pagingParams,
  request: textFilter,
  provider: textFilter,
  status: z.enum(["ok", "error"], { error: "must be ok or error" }).optional(),
});

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
