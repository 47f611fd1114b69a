import { Router } from "express";
import { requirePermission } from "@router/access";
import type { Db } from "@router/db";
import { invalid, notFound } from "@router/errors";
import { identityOf } from "@router/http-kit";
import type { Clock } from "@router/money";
import { brandingOf } from "../branding/branding";
import { readBranding } from "../branding/branding-store";
import type { ReportsMetrics } from "../metrics";
import { requestedMonth } from "../months/report-month";
import { readMonth } from "../rollups/rollup-store";
import { clientReport } from "./client-report";

// Workspace ids are `ws_` plus base62, as the gateway issues them.
const WORKSPACE_ID = /^ws_[0-9A-Za-z]{1,64}$/;

export function reportRoutes(deps: { db: Db; clock: Clock; metrics: ReportsMetrics }): Router {
  const router = Router();

  router.get("/v1/reports/workspaces/:id", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "usage:read");
    const id = req.params.id;
    if (!WORKSPACE_ID.test(id)) throw invalid("id", "expected a workspace id (ws_...)");
    // The gateway checks that the workspace is the caller's organisation's and sends its current
    // name; a request without that check is answered as if the workspace did not exist.
    const workspace = identity.workspace;
    if (workspace?.id !== id) throw notFound("workspace");
    const now = deps.clock.now();
    const month = requestedMonth(req.query.month, now);

    const [stored, fields] = await Promise.all([
      readMonth(deps.db, { orgId: identity.orgId, workspaceId: id, month: `${month.label}-01` }),
      readBranding(deps.db, identity.orgId),
    ]);
    const report = clientReport({
      workspace,
      nameInMonth: stored.nameInMonth,
      month,
      branding: brandingOf(identity, fields),
      rows: stored.rows,
      now,
    });
    deps.metrics.reportServed();
    res.json({ data: report });
  });

  return router;
}
