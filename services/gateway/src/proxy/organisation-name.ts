import type { Db } from "@router/db";
import type { RequestHandler } from "express";
import { requirePrincipal } from "../auth/principal";
import { getOrganisation } from "../organisations/organisation-store";

/**
 * Adds the caller's organisation's current name to the identity of a forwarded route that shows it
 * (report branding falls back to it); only the gateway holds organisations. Sets
 * `res.locals.orgName`.
 */
export function organisationName(db: Db): RequestHandler {
  return async (_req, res, next) => {
    const organisation = await getOrganisation(db, requirePrincipal(res).orgId);
    if (organisation) res.locals.orgName = organisation.name;
    next();
  };
}
