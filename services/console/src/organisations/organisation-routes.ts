import { Router, type Request, type Response } from "express";
import type { Db } from "@router/db";
import { notFound } from "@router/errors";
import { parseInput } from "@router/http-kit";
import { organisations } from "@router/management-api";
import { requirePrincipal, type Authorize } from "../auth/principal";
import { objectBody } from "@router/http-kit";
import { getOrganisation, renameOrganisation, type Organisation } from "./organisation-store";

const FIXED = { id: "cannot change", slug: "cannot change", plan: "cannot change here", created_at: "cannot change", members: "cannot change" };

/** The Organisation resource (in the service README). */
function organisationView(o: Organisation) {
  return { id: o.id, name: o.name, slug: o.slug, plan: o.plan, created_at: o.createdAt.toISOString(), members: o.members };
}

/** `GET` (any role) and `PATCH /v1/organization` (rename: org:write; id and slug never change). */
export function organisationRoutes(deps: { db: Db; authorize: Authorize }): Router {
  const router = Router();
  const read = async (orgId: string) => {
    const org = await getOrganisation(deps.db, orgId);
    if (!org) throw notFound("organisation");
    return organisationView(org);
  };
  router.get("/v1/organization", deps.authorize("read"), async (_req: Request, res: Response) => {
    res.json({ data: await read(requirePrincipal(res).orgId) });
  });
  router.patch("/v1/organization", deps.authorize("org:write"), async (req: Request, res: Response) => {
    const { orgId } = requirePrincipal(res);
    const { name } = parseInput(organisations.renameBody, objectBody(req, ["name"], FIXED));
    await renameOrganisation(deps.db, orgId, name);
    res.json({ data: await read(orgId) });
  });
  return router;
}
