import type { RequestHandler } from "express";
import { requirePrincipal } from "../auth/principal";
import type { IdentityDirectory } from "../console/console-port";

/**
 * Adds the caller's organisation's current name, which the console holds, to the identity of a
 * forwarded route that shows it (report branding falls back to it). Sets `res.locals.orgName`.
 */
export function organisationName(directory: Pick<IdentityDirectory, "organisationName">): RequestHandler {
  return async (_req, res, next) => {
    const name = await directory.organisationName(requirePrincipal(res).orgId);
    if (name !== null) res.locals.orgName = name;
    next();
  };
}
