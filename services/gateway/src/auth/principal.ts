import type { Principal } from "@router/access";
import { DomainError } from "@router/errors";
import type { Identity } from "@router/http-kit";
import type { Response } from "express";

/** The identity an owning service sees for a principal (signed by the proxy). */
export function principalIdentity(p: Principal): Identity {
  return {
    orgId: p.orgId,
    credential: p.credential,
    keyHash: p.keyHash,
    keyName: p.keyName,
    workspaceId: p.workspaceId,
    role: p.role,
    userId: p.userId,
    operator: p.operator,
    ...(p.session
      ? { session: { tokenHash: p.session.tokenHash, authMethod: p.session.authMethod, expiresAt: p.session.expiresAt.toISOString() } }
      : {}),
  };
}

/** The principal the management authentication resolved; throws when a route forgot to authenticate. */
export function requirePrincipal(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw new DomainError("internal", "route reached without authentication");
  return principal;
}
