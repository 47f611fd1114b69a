import { Router } from "express";
import { requirePermission } from "@router/access";
import type { Db } from "@router/db";
import { identityOf, parseInput } from "@router/http-kit";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { queryOf } from "../paging/query-params";
import { writeCsvExport } from "./export-csv";
import { exportRows } from "./export-rows";
import { activity } from "@router/management-api";

/** The export stops at 200,000 rows (services/activity/README.md). */
export const EXPORT_MAX_ROWS = 200_000;
const BATCH_ROWS = 1000;

const exportQuery = activity.exportQuery;

/** [first instant of the month, first instant of the next), UTC. */
function monthRange(month: string): { from: Date; to: Date } {
  const [year, mon] = month.split("-").map(Number) as [number, number];
  return { from: new Date(Date.UTC(year, mon - 1, 1)), to: new Date(Date.UTC(year, mon, 1)) };
}

export interface ExportRoutesDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  /** Rows before the `# truncated` line; tests make it small. */
  maxRows?: number;
}

export function exportRoutes(deps: ExportRoutesDeps): Router {
  const router = Router();
  const maxRows = deps.maxRows ?? EXPORT_MAX_ROWS;

  /**
   * A month of requests as CSV (in the service README), streamed from the store as it is read. The gateway
   * limits it to 6 a minute per key and has already refused another organisation's workspace.
   */
  router.get("/v1/activity/export", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "usage:export");
    const q = parseInput(exportQuery, queryOf(req.query), "");
    const month = q.month ?? deps.clock.now().toISOString().slice(0, 7);
    const scope = { orgId: identity.orgId, workspaceId: q.workspace, ...monthRange(month) };
    // One row past the limit tells whether the file is cut.
    const batches = exportRows(deps.db, scope, maxRows + 1, BATCH_ROWS)[Symbol.asyncIterator]();
    const first = await batches.next();

    const named = identity.workspace && identity.workspace.id === q.workspace ? identity.workspace : undefined;
    res.status(200);
    res.setHeader("content-type", "text/csv; charset=utf-8");
    res.setHeader("content-disposition", `attachment; filename="activity-${month}${q.workspace ? `-${q.workspace}` : ""}.csv"`);
    res.setHeader("cache-control", "no-store");
    try {
      await writeCsvExport({ batches, first, maxRows, named }, res);
    } catch (err) {
      // The status line is gone: all that is left is to cut the file short, so it cannot pass for whole.
      if (!res.destroyed) deps.log.error({ err, orgId: identity.orgId, month }, "activity.export.failed");
      res.destroy();
    }
  });

  return router;
}
