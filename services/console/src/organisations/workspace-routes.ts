import { Router, type Request, type Response } from "express";
import type { Db } from "@router/db";
import { DomainError, invalid, notFound } from "@router/errors";
import { parseInput } from "@router/http-kit";
import type { Clock } from "@router/money";
import { organisations } from "@router/management-api";
import type { ledger } from "@router/proto";
import { requirePrincipal, type Authorize } from "../auth/principal";
import { objectBody } from "@router/http-kit";
import { lockOrganisation } from "./organisation-store";
import { workspaceSpend, type WorkspaceSpend } from "./workspace-spend";
import {
  countWorkspaces,
  deleteWorkspace,
  getWorkspace,
  insertWorkspace,
  listWorkspaces,
  MAX_WORKSPACES,
  renameWorkspace,
  type Workspace,
} from "./workspace-store";

const FIXED = { id: "cannot change", slug: "cannot change", created_at: "cannot change", active_keys: "cannot change" };
export const WORKSPACE_ID = /^ws_[0-9A-Za-z]{1,64}$/;

function idParam(req: Request): string {
  const id = String(req.params.id ?? "");
  if (!WORKSPACE_ID.test(id)) throw invalid("id", "expected a workspace id (ws_...)");
  return id;
}

/** A Workspace row (in the service README); spend this month and budgets are the ledger's. */
function workspaceView(w: Workspace, currentWorkspaceId: string | null, spend: WorkspaceSpend) {
  return {
    id: w.id,
    name: w.name,
    slug: w.slug,
    created_at: w.createdAt.toISOString(),
    active_keys: w.activeKeys,
    spend_this_month: spend.spend_this_month,
    budgets: spend.budgets,
    is_current: w.id === currentWorkspaceId,
  };
}

/** A workspace just created has spent nothing and has no budgets. */
const FRESH: WorkspaceSpend = { spend_this_month: 0, budgets: [] };

export interface WorkspaceRoutesDeps {
  db: Db;
  authorize: Authorize;
  clock: Clock;
  /** Asked for each workspace's spend this month and budgets. */
  ledger: ledger.LedgerServiceClient;
  grpcDeadlineMs: number;
}

/** Workspaces (one per client): list (any role), create, rename, remove (config:write). */
export function workspaceRoutes(deps: WorkspaceRoutesDeps): Router {
  const router = Router();
  const spendOf = (orgId: string, ids: string[]) => workspaceSpend(deps.ledger, orgId, ids, { deadlineMs: deps.grpcDeadlineMs });

  router.get("/v1/workspaces", deps.authorize("read"), async (_req: Request, res: Response) => {
    const p = requirePrincipal(res);
    const rows = await listWorkspaces(deps.db, p.orgId);
    const spend = await spendOf(p.orgId, rows.map((w) => w.id));
    res.json({ data: rows.map((w) => workspaceView(w, p.workspaceId, spend(w.id))), next_cursor: null });
  });

  router.post("/v1/workspaces", deps.authorize("config:write"), async (req: Request, res: Response) => {
    const p = requirePrincipal(res);
    const { name } = parseInput(organisations.workspaceNameBody, objectBody(req, ["name"], FIXED));
    const id = await deps.db.tx(async (q) => {
      await lockOrganisation(q, p.orgId);
      if ((await countWorkspaces(q, p.orgId)) >= MAX_WORKSPACES) {
        throw new DomainError("conflict", `an organisation holds at most ${MAX_WORKSPACES} workspaces; remove one first`, {
          details: { limit: MAX_WORKSPACES },
        });
      }
      return insertWorkspace(q, p.orgId, name, deps.clock.now());
    });
    const created = await getWorkspace(deps.db, p.orgId, id);
    if (!created) throw notFound("workspace");
    res.status(201).json({ data: workspaceView(created, p.workspaceId, FRESH) });
  });

  router.patch("/v1/workspaces/:id", deps.authorize("config:write"), async (req: Request, res: Response) => {
    const p = requirePrincipal(res);
    const id = idParam(req);
    const { name } = parseInput(organisations.workspaceNameBody, objectBody(req, ["name"], FIXED));
    if (!(await renameWorkspace(deps.db, p.orgId, id, name))) throw notFound("workspace");
    const renamed = await getWorkspace(deps.db, p.orgId, id);
    if (!renamed) throw notFound("workspace");
    const spend = await spendOf(p.orgId, [id]);
    res.json({ data: workspaceView(renamed, p.workspaceId, spend(id)) });
  });

  router.delete("/v1/workspaces/:id", deps.authorize("config:write"), async (req: Request, res: Response) => {
    const p = requirePrincipal(res);
    const id = idParam(req);
    await deps.db.tx(async (q) => {
      await lockOrganisation(q, p.orgId);
      const found = await getWorkspace(q, p.orgId, id);
      if (!found) throw notFound("workspace");
      if (found.activeKeys > 0) {
        throw new DomainError("conflict", `workspace ${id} has ${found.activeKeys} active key(s); move or revoke them first`, {
          details: { active_keys: found.activeKeys },
        });
      }
      if ((await countWorkspaces(q, p.orgId)) <= 1) {
        throw new DomainError("conflict", "this is the organisation's last workspace; create another before removing it");
      }
      await deleteWorkspace(q, p.orgId, id);
    });
    res.json({ data: { deleted: true } });
  });

  return router;
}
