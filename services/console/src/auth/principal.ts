import type { NextFunction, Request, RequestHandler, Response } from "express";
import { AUTH_METHODS, requirePermission, type AuthMethod, type Permission, type Principal } from "@router/access";
import { DomainError } from "@router/errors";
import { IDENTITY_HEADER, verifyIdentity, type Identity, type IdentityPublicKeys } from "@router/http-kit";

export interface AuthorizeOptions {
  /** Only a dashboard session may call the route (the current session). */
  sessionOnly?: boolean;
  /** The route needs a signed-in person: a key or session with no person behind it gets 403. */
  person?: boolean;
}

/** Builds the middleware for a management route that needs `permission`; it sets `res.locals.principal`. */
export type Authorize = (permission: Permission, opts?: AuthorizeOptions) => RequestHandler;

/** The caller's verified identity, read once per request (public routes mounted beside these carry none). */
export async function verifiedIdentity(req: Request, publicKeys: IdentityPublicKeys): Promise<Identity> {
  req.identity ??= await verifyIdentity(req.header(IDENTITY_HEADER), publicKeys);
  return req.identity;
}

function principalOf(identity: Identity): Principal {
  if (identity.credential === "inference") {
    throw new DomainError("permission_denied", "this route takes a management key (rt-mgmt-...) or a dashboard session", {
      details: { key_class: "inference" },
    });
  }
  const s = identity.session;
  return {
    orgId: identity.orgId,
    operator: identity.operator,
    credential: identity.credential,
    role: identity.role,
    userId: identity.userId,
    keyHash: identity.keyHash,
    keyName: identity.keyName,
    workspaceId: identity.workspaceId,
    session:
      identity.credential === "session" && s && (AUTH_METHODS as readonly string[]).includes(s.authMethod)
        ? { tokenHash: s.tokenHash, authMethod: s.authMethod as AuthMethod, expiresAt: new Date(s.expiresAt) }
        : null,
  };
}

/**
 * The route's own checks once the gateway has authenticated the caller and counted its management
 * rate limit: the route's options, then `permission` for the caller's role. Throws the 403.
 */
export function createAuthorize(publicKeys: IdentityPublicKeys): Authorize {
  return (permission, opts = {}) =>
    async (req: Request, res: Response, next: NextFunction): Promise<void> => {
      const principal = principalOf(await verifiedIdentity(req, publicKeys));
      if (opts.sessionOnly && !principal.session) {
        throw new DomainError("permission_denied", "this route takes a dashboard session, not an API key", {
          details: { credential: principal.credential },
        });
      }
      if (opts.person && principal.userId === null) {
        throw new DomainError("permission_denied", "this needs a signed-in person; an API key has no seat", {
          details: { credential: principal.credential },
        });
      }
      requirePermission(principal, permission);
      res.locals.principal = principal;
      next();
    };
}

/** The hash of the calling inference key, on a route the gateway forwards with an inference key's identity. */
export async function callingKeyHash(req: Request, publicKeys: IdentityPublicKeys): Promise<string> {
  const identity = await verifiedIdentity(req, publicKeys);
  if (identity.credential !== "inference" || identity.keyHash === null) {
    throw new DomainError("permission_denied", "this route takes an inference key (rt-v1-...)", { details: { key_class: identity.credential } });
  }
  return identity.keyHash;
}

/** The principal `authorize` resolved; throws when a route forgot to authorize. */
export function requirePrincipal(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw new DomainError("internal", "route reached without authentication");
  return principal;
}
