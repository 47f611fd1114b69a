import type { Actor, Role } from "./roles";

/** How a dashboard session was signed in. */
export type AuthMethod = "management_key" | "oauth" | "wallet" | "invitation";

export const AUTH_METHODS: readonly AuthMethod[] = ["management_key", "oauth", "wallet", "invitation"];

/** The dashboard session behind a principal. */
export interface PrincipalSession {
  tokenHash: string;
  authMethod: AuthMethod;
  expiresAt: Date;
}

/**
 * Who calls a management route: a management key or a dashboard session, the organisation it acts
 * in and the role it acts with. The gateway resolves it from the credential; the console rebuilds
 * it from the identity the gateway signed.
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

/** A dashboard session with the seat and key behind it: what the console answers the gateway (FindSession). */
export interface SessionRecord {
  tokenHash: string;
  orgId: string;
  operator: boolean;
  userId: string | null;
  keyHash: string | null;
  authMethod: AuthMethod;
  expiresAt: Date;
  endedAt: Date | null;
  /** The person's role in the organisation; null when they hold no seat there. */
  seatRole: Role | null;
  keyName: string | null;
  keyWorkspaceId: string | null;
  /** Whether the key exchanged for this session has been revoked. */
  keyDisabled: boolean;
  /**
   * The workspace inference made with this session is charged to: its key's, or else the
   * organisation's first workspace (where keys go by default); null only for an organisation without one.
   */
  chargeWorkspaceId: string | null;
  chargeWorkspaceName: string | null;
}
