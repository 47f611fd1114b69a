import { Router, type Request, type Response } from "express";
import type { Db } from "@router/db";
import { DomainError, invalid, notFound } from "@router/errors";
import { parseInput } from "@router/http-kit";
import type { Clock } from "@router/money";
import { z } from "zod";
import type { Manage } from "../auth/management-auth";
import { requirePrincipal } from "../auth/principal";
import { objectBody } from "../json-body";
import { WORKSPACE_NAME } from "./display-name";
import { lockOrganisation } from "./organisation-store";
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

export const nameBody = z.object({ name: WORKSPACE_NAME });
const FIXED = { id: "cannot change", slug: "cannot change", created_at: "cannot change", active_keys: "cannot change" };
export const WORKSPACE_ID = /^ws_[0-9A-Za-z]{1,64}$/;

function idParam(req: Request): string {
  const id = String(req.params.id ?? "");
  if (!WORKSPACE_ID.test(id)) throw invalid("id", "expected a workspace id (ws_...)");
  return id;
}

/** A Workspace row (spec doc 1); spend and budgets are the ledger's and join it with spend control. */
function workspaceView(w: Workspace, currentWorkspaceId: string | null) {
  return {
    id: w.id,
    name: w.name,
    slug: w.slug,
    created_at: w.createdAt.toISOString(),
    active_keys: w.activeKeys,
    is_current: w.id === currentWorkspaceId,
  };
}

/** Workspaces (one per client): list (any role), create, rename, remove (config:write). */
export function workspaceRoutes(deps: { db: Db; manage: Manage; clock: Clock }): Router {
  const router = Router();

  router.get("/v1/workspaces", deps.manage("read"), async (_req: Request, res: Response) => {
    const p = requirePrincipal(res);
    const rows = await listWorkspaces(deps.db, p.orgId);
    res.json({ data: rows.map((w) => workspaceView(w, p.workspaceId)), next_cursor: null });
  });

  router.post("/v1/workspaces", deps.manage("config:write"), async (req: Request, res: Response) => {
    const p = requirePrincipal(res);
    const { name } = parseInput(nameBody, objectBody(req, ["name"], FIXED));
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
    res.status(201).json({ data: workspaceView(created, p.workspaceId) });
  });

  router.patch("/v1/workspaces/:id", deps.manage("config:write"), async (req: Request, res: Response) => {
    const p = requirePrincipal(res);
    const id = idParam(req);
    const { name } = parseInput(nameBody, objectBody(req, ["name"], FIXED));
    if (!(await renameWorkspace(deps.db, p.orgId, id, name))) throw notFound("workspace");
    const renamed = await getWorkspace(deps.db, p.orgId, id);
    if (!renamed) throw notFound("workspace");
    res.json({ data: workspaceView(renamed, p.workspaceId) });
  });

  router.delete("/v1/workspaces/:id", deps.manage("config:write"), async (req: Request, res: Response) => {
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
