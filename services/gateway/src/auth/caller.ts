import type { WindowKind } from "@router/money";

/**
 * The authenticated caller of a gateway route, as resolved from a bearer key (through the
 * 10-second auth cache). Set on `res.locals.caller` by the authentication middleware.
 */
export interface Caller {
  orgId: string;
  /** Whether the organisation is the operator organisation (sees /v1/health diagnostics). */
  operator: boolean;
  key: CallerKey;
  /** The member user who owns the key, when a member does (guardrails may be assigned to them). */
  memberUserId?: string | null;
}

export interface CallerKey {
  /** Hex HMAC-SHA256 of the plaintext under ROUTER_KEY_PEPPER; identifies the key. */
  hash: string;
  /** The first characters of the plaintext, e.g. `rt-v1-ab12`, safe to show. */
  prefix: string;
  name: string | null;
  label: string | null;
  class: "inference" | "management";
  workspaceId: string | null;
  /** That workspace's name (the auth cache keeps it up to ten seconds after a rename). */
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
