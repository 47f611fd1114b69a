import { invalid, notFound } from "@router/errors";
import { ledger as ledgerApi } from "@router/management-api";
import type { Request, RequestHandler } from "express";
import { requirePrincipal } from "../auth/principal";
import type { IdentityDirectory } from "../console/console-port";

/** Where a forwarded route names its workspace, and the field an error names. */
export type WorkspaceSource = { query: string } | { param: string } | { body: string };

/**
 * Checks the workspace a forwarded management route names (in its query, path or JSON body) before
 * the owning service sees it: a malformed id is a 400 naming the field, another organisation's (or
 * an unknown) one a 404, so no service can be asked about a workspace outside the caller's
 * organisation. The workspace, with its name (the console holds workspaces), then travels in the
 * signed identity (`res.locals.workspace`). Routes naming none pass.
 */
export function namedWorkspace(directory: Pick<IdentityDirectory, "findWorkspace">, source: WorkspaceSource): RequestHandler {
  const field = "query" in source ? source.query : "param" in source ? source.param : source.body;
  const read = (req: Request): unknown => {
    if ("query" in source) return req.query[source.query];
    if ("param" in source) return req.params[source.param];
    // A body that is not a JSON object names no workspace; the owning service refuses it.
    const body: unknown = req.body;
    return typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>)[source.body] : undefined;
  };
  return async (req, res, next) => {
    const raw = read(req);
    // Null in a body means "no workspace" (an organisation-wide agent budget).
    if (raw === undefined || raw === null) return next();
    if (typeof raw !== "string" || !ledgerApi.WORKSPACE_ID.test(raw)) throw invalid(field, "expected a workspace id (ws_...)");
    const workspace = await directory.findWorkspace(requirePrincipal(res).orgId, raw);
    if (!workspace) throw notFound("workspace");
    res.locals.workspace = { id: workspace.id, name: workspace.name };
    next();
  };
}
