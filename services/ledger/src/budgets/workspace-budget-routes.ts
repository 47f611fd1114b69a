import { Router, type Request } from "express";
import { ledger } from "@router/management-api";
import { requirePermission } from "@router/access";
import type { Db } from "@router/db";
import { invalid, notFound } from "@router/errors";
import { identityOf, parseInput } from "@router/http-kit";
import { fromUsd, nanosString, toUsd, type Clock } from "@router/money";
import type { BudgetCache } from "./budget-cache";
import type { WorkspaceBudget } from "./budget-ceilings";
import { parseInterval, WORKSPACE_ID } from "./budget-rules";
import { deleteWorkspaceBudget, putWorkspaceBudget, workspaceBudgetsOf } from "./budget-store";

export interface BudgetRoutesDeps {
  db: Db;
  budgets: BudgetCache;
  clock: Clock;
}

const workspaceBudgetBody = ledger.workspaceBudgetBody;

/** A Workspace budget (in the service README). */
export function workspaceBudgetView(b: WorkspaceBudget) {
  return { interval: b.window, limit_nanodollars: nanosString(b.limit), include_byok: b.includeByok };
}

function workspaceIdParam(req: Request): string {
  const id = String(req.params.id ?? "");
  if (!WORKSPACE_ID.test(id)) throw invalid("id", "expected a workspace id (ws_...)");
  return id;
}

/**
 * A write names a workspace the gateway has checked belongs to the caller's organisation (it signs
 * it into the identity); anything else is a 404, so no write reaches another organisation's.
 */
function checkedWorkspace(req: Request, id: string): void {
  if (identityOf(req).workspace?.id !== id) throw notFound("workspace");
}

/** The body as an object: anything else is a 400 naming it. */
export function objectBody(req: Request): unknown {
  const body: unknown = req.body ?? {};
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalid("body", "expected a JSON object");
  return body;
}

/**
 * `GET /v1/workspaces/{id}/budgets` (any role; an unknown workspace, or another organisation's,
 * has none), `PUT` and `DELETE /v1/workspaces/{id}/budgets/{interval}` (config:write).
 */
export function workspaceBudgetRoutes(deps: BudgetRoutesDeps): Router {
  const router = Router();

  router.get("/v1/workspaces/:id/budgets", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "read");
    const budgets = await workspaceBudgetsOf(deps.db, identity.orgId, [workspaceIdParam(req)]);
    res.json({ data: budgets.map(workspaceBudgetView), next_cursor: null });
  });

  router.put("/v1/workspaces/:id/budgets/:interval", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "config:write");
    const workspaceId = workspaceIdParam(req);
    const window = parseInterval(req.params.interval);
    const body = parseInput(workspaceBudgetBody, objectBody(req));
    checkedWorkspace(req, workspaceId);
    const budget: WorkspaceBudget = { workspaceId, window, limit: fromUsd(body.limit_usd), includeByok: body.include_byok };
    await putWorkspaceBudget(deps.db, identity.orgId, budget, deps.clock.now());
    deps.budgets.invalidate(identity.orgId);
    res.json({
      data: {
        workspace_id: workspaceId,
        interval: window,
        limit_usd: toUsd(budget.limit),
        limit_nanodollars: nanosString(budget.limit),
        include_byok: budget.includeByok,
      },
    });
  });

  router.delete("/v1/workspaces/:id/budgets/:interval", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "config:write");
    const workspaceId = workspaceIdParam(req);
    const window = parseInterval(req.params.interval);
    checkedWorkspace(req, workspaceId);
    if (!(await deleteWorkspaceBudget(deps.db, identity.orgId, workspaceId, window))) throw notFound(`${window} budget`);
    deps.budgets.invalidate(identity.orgId);
    res.json({ data: { deleted: true } });
  });

  return router;
}
