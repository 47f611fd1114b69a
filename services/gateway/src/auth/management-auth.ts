import type { IncomingMessage, ServerResponse } from "node:http";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { requirePermission, type Permission } from "@router/access";
import { DomainError } from "@router/errors";
import { csrfHolds, cookiesOf, CSRF_HEADER, SESSION_COOKIE, sessionTokenHash } from "@router/http-kit";
import type { SessionDirectory } from "./session-directory";
import { principalSubject, type CredentialRateLimit } from "../rate-limits/rate-limit-middleware";
import { seatlessKey, type KeyRecord } from "@router/api-keys";
import { resolveBearerKey, seatGone, type AuthenticatorDeps } from "./authenticate";
import type { Principal } from "@router/access";

export interface ManagementAuthDeps {
  keys: AuthenticatorDeps;
  sessions: SessionDirectory;
  /** Keys the CSRF tokens (ROUTER_INTERNAL_SECRET). */
  csrfSecret: string;
  /**
   * The management rate limit, counted per credential once the principal is known (a key by its
   * hash, a session by its token hash); throws the 429. Unset: management routes are not limited.
   */
  rateLimit?: CredentialRateLimit;
}

/** Builds the middleware for a management route that needs `permission`; it sets `res.locals.principal`. */
export type Manage = (permission: Permission) => RequestHandler;

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

function unauthorized(message: string): DomainError {
  return new DomainError("unauthorized", message, { details: { field: "Authorization" } });
}

function keyPrincipal(key: KeyRecord): Principal {
  // resolveBearerKey refuses it already; checked again so a missing role can never read as owner.
  if (seatlessKey(key)) throw seatGone();
  return {
    orgId: key.orgId,
    operator: key.operator,
    credential: "management",
    role: key.userRole ?? "owner",
    userId: key.userId,
    keyHash: key.hash,
    keyName: key.name,
    workspaceId: key.workspaceId,
    session: null,
  };
}

/**
 * Resolves a management key (bearer) or a dashboard session (cookie) into the principal of the
 * request. A bearer header wins over a cookie. A session on any method but GET must send
 * `x-csrf-token` equal to its `rt_csrf` cookie.
 */
export async function resolvePrincipal(deps: ManagementAuthDeps, req: IncomingMessage, res: ServerResponse): Promise<Principal> {
  if (req.headers.authorization !== undefined) {
    return keyPrincipal(await resolveBearerKey(deps.keys, req, res, { allow: ["management"] }));
  }
  const token = cookiesOf(req)[SESSION_COOKIE];
  if (!token) {
    res.setHeader("WWW-Authenticate", 'Bearer realm="router"');
    throw unauthorized("Authorization: missing; expected 'Bearer rt-mgmt-...' or a dashboard session");
  }
  const session = await deps.sessions.get(sessionTokenHash(token));
  const now = deps.keys.clock.now().getTime();
  if (
    !session ||
    session.endedAt !== null ||
    session.expiresAt.getTime() <= now ||
    session.keyDisabled ||
    (session.userId !== null && session.seatRole === null)
  ) {
    throw new DomainError("unauthorized", "the dashboard session has ended; sign in again", { details: { field: SESSION_COOKIE } });
  }
  if (!SAFE_METHODS.has(req.method ?? "") && !csrfHolds(req, token, deps.csrfSecret)) {
    throw new DomainError("permission_denied", `${CSRF_HEADER}: must equal the rt_csrf cookie of this session`, {
      details: { field: CSRF_HEADER },
    });
  }
  return {
    orgId: session.orgId,
    operator: session.operator,
    credential: "session",
    role: session.seatRole ?? "owner",
    userId: session.userId,
    keyHash: session.keyHash,
    keyName: session.keyName,
    workspaceId: session.keyWorkspaceId,
    session: { tokenHash: session.tokenHash, authMethod: session.authMethod, expiresAt: session.expiresAt },
  };
}

/**
 * What every management route checks at the edge once the principal is known: its rate limit, then
 * `permission` for the principal's role (the owning service checks the route's own rules). Throws
 * the route's 429 or 403.
 */
export async function admitPrincipal(deps: ManagementAuthDeps, principal: Principal, permission: Permission, res: ServerResponse): Promise<void> {
  // Before the route's own checks: a refused or failing call counts like any other.
  await deps.rateLimit?.(principalSubject(principal), res as Response);
  requirePermission(principal, permission);
}

/** The management authentication, its rate limit and the permission check, as express middleware. */
export function createManagementAuth(deps: ManagementAuthDeps): Manage {
  return (permission) =>
    async (req: Request, res: Response, next: NextFunction): Promise<void> => {
      const principal = await resolvePrincipal(deps, req, res);
      await admitPrincipal(deps, principal, permission, res);
      res.locals.principal = principal;
      next();
    };
}
