import type { AuthMethod, Role } from "@router/access";
import type { CallerKey } from "./caller";

/** A key as the console answers it for authentication (ConsoleService.FindKey). */
export interface KeyRecord extends CallerKey {
  orgId: string;
  /** Whether the key's organisation is the operator organisation. */
  operator: boolean;
  /** Revoked. */
  disabled: boolean;
  /** The person the key belongs to; null for a key with no person behind it. */
  userId: string | null;
  /** That person's current role in the key's organisation; null without a person or a seat. */
  userRole: Role | null;
}

/** A dashboard session with the seat and key behind it, as the console answers it (FindSession). */
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
  /** The workspace inference made with this session is charged to (see the console's session store). */
  chargeWorkspaceId: string | null;
  chargeWorkspaceName: string | null;
}
