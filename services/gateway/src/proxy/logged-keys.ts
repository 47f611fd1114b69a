import { roleMay } from "@router/access";
import type { Db } from "@router/db";
import { invalid } from "@router/errors";
import { console as consoleApi } from "@router/management-api";
import type { RequestHandler } from "express";
import { requirePrincipal } from "../auth/principal";
import { foreignKeyHashes } from "../keys/key-store";

/**
 * Checks, before `PUT /v1/logging` reaches the console, that every key hash its `key_include` and
 * `key_exclude` name is a key of the caller's organisation (the gateway owns the keys): another
 * organisation's or an unknown one is a 400 naming the field. A caller without `config:write`, or a
 * body the description does not take, passes unchecked: the console refuses those in its own words,
 * in the order it always has (role, then fields, then keys, then the lock).
 */
export function loggedKeys(db: Db): RequestHandler {
  return async (req, res, next) => {
    const principal = requirePrincipal(res);
    const body: unknown = req.body;
    if (!roleMay(principal.role, "config:write") || typeof body !== "object" || body === null || Array.isArray(body)) return next();
    if (Object.keys(body).some((f) => !(consoleApi.LOGGING_FIELDS as readonly string[]).includes(f))) return next();
    const parsed = consoleApi.loggingPutBody.safeParse(body);
    if (!parsed.success) return next();
    for (const field of ["key_include", "key_exclude"] as const) {
      const foreign = await foreignKeyHashes(db, principal.orgId, parsed.data[field]);
      if (foreign.length > 0) throw invalid(field, `not a key of this organisation: ${foreign[0]}`);
    }
    next();
  };
}
