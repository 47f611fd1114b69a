import type { ApiKey } from "@router/api-keys";

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

/** The calling key as the auth cache holds it (a dashboard session's inference gets one of its own). */
export type CallerKey = ApiKey;
