import type { Db } from "@router/db";
import { invalid, notFound } from "@router/errors";
import type { Request, RequestHandler } from "express";
import { requirePrincipal } from "../auth/principal";
import { WORKSPACE_ID } from "../organisations/workspace-routes";
import { getWorkspace } from "../organisations/workspace-store";

/** Where a forwarded route names its workspace, and the field an error names. */
export type WorkspaceSource = { query: string } | { param: string };

/**
 * Checks the workspace a forwarded management route names before the owning service sees it: a
 * malformed id is a 400 naming the field, another organisation's (or an unknown) one a 404, so no
 * service can be asked about a workspace outside the caller's organisation. The workspace, with its
 * name, then travels in the signed identity (`res.locals.workspace`). Routes naming none pass.
 */
export function namedWorkspace(db: Db, source: WorkspaceSource): RequestHandler {
  const field = "query" in source ? source.query : source.param;
  const read = (req: Request): unknown => ("query" in source ? req.query[source.query] : req.params[source.param]);
  return async (req, res, next) => {
    const raw = read(req);
    if (raw === undefined) return next();
    if (typeof raw !== "string" || !WORKSPACE_ID.test(raw)) throw invalid(field, "expected a workspace id (ws_...)");
    const workspace = await getWorkspace(db, requirePrincipal(res).orgId, raw);
    if (!workspace) throw notFound("workspace");
    res.locals.workspace = { id: workspace.id, name: workspace.name };
    next();
  };
}
