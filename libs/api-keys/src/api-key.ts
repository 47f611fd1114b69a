import type { Role } from "@router/access";
import type { WindowKind } from "@router/money";
import type { KeyClass } from "./key-secret";

/** A key's own fields: what the console stores and the gateway authenticates and charges with. */
export interface ApiKey {
  /** Hex HMAC-SHA256 of the plaintext under ROUTER_KEY_PEPPER; identifies the key. */
  hash: string;
  /** The first characters of the plaintext, e.g. `rt-v1-ab12`, safe to show. */
  prefix: string;
  name: string | null;
  label: string | null;
  class: KeyClass;
  workspaceId: string | null;
  /** That workspace's name (the gateway's auth cache keeps it up to ten seconds after a rename). */
  workspaceName: string | null;
  /** Ceiling in nanodollars, null for none. */
  limitNanos: bigint | null;
  limitReset: WindowKind | null;
  limitMode: "hard" | "soft";
  includeByokInLimit: boolean;
  paused: boolean;
  pausedReason: "runaway" | "manual" | null;
  expiresAt: Date | null;
}

/** A key with what authentication reads beside it: what the console answers the gateway (FindKey). */
export interface KeyRecord extends ApiKey {
  orgId: string;
  /** Whether the key's organisation is the operator organisation. */
  operator: boolean;
  /** Revoked. */
  disabled: boolean;
  /**
   * The person the key belongs to (who created it, or approved its PKCE consent); null for a key
   * with no person behind it. A management key acts with their role; an inference key carries them
   * as its member (their guardrails) and never uses the role.
   */
  userId: string | null;
  /** That person's current role in the key's organisation; null without a person or a seat. */
  userRole: Role | null;
}

/** A key whose person no longer holds a seat in its organisation (removed after the key was made): refused. */
export function seatlessKey(key: Pick<KeyRecord, "userId" | "userRole">): boolean {
  return key.userId !== null && key.userRole === null;
}
