import type { Actor, Role } from "@router/access";
import { DomainError } from "@router/errors";
import type { Identity } from "@router/http-kit";
import type { Response } from "express";
import type { AuthMethod } from "../sessions/session-store";

/** The dashboard session behind a principal. */
export interface PrincipalSession {
  tokenHash: string;
  authMethod: AuthMethod;
  expiresAt: Date;
}

/**
 * Who calls a management route: a management key or a dashboard session, the organisation it acts
 * in and the role it acts with. Set on `res.locals.principal` by the management authentication.
 */
export interface Principal extends Actor {
  orgId: string;
  operator: boolean;
  credential: "management" | "session";
  role: Role;
  /** The signed-in person, or the person a management key belongs to; null for a key with no person. */
  userId: string | null;
  /** The management key used, or the one the session was exchanged from. */
  keyHash: string | null;
  keyName: string | null;
  /** That key's workspace (a workspace's `is_current`). */
  workspaceId: string | null;
  session: PrincipalSession | null;
}

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
  };
}

/** The principal the management authentication resolved; throws when a route forgot to authenticate. */
export function requirePrincipal(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw new DomainError("internal", "route reached without authentication");
  return principal;
}
