import type { IncomingMessage, ServerResponse } from "node:http";
import type { Permission } from "@router/access";
import { DomainError } from "@router/errors";
import { cookiesOf, SESSION_COOKIE } from "@router/http-kit";
import { callerOf, resolveBearerKey, type ResolveCaller } from "./authenticate";
import type { Caller } from "./caller";
import { admitPrincipal, resolvePrincipal, type ManagementAuthDeps } from "./management-auth";

/**
 * The key hash a dashboard session's inference is charged to: one per person and organisation (or,
 * for a session exchanged from a key with no person, one per that key), and never a real key's hash
 * (those are 64 hex characters). So usage, activity and budgets group a person's dashboard
 * requests, and nothing that acts on a key (a runaway pause, a key ceiling) can reach the
 * management key a session was opened with.
 */
export function sessionKeyHash(orgId: string, who: { userId: string | null; keyHash: string | null }): string | null {
  if (who.userId !== null) return `dashboard:${orgId}:${who.userId}`;
  return who.keyHash === null ? null : `dashboard:${orgId}:key-${who.keyHash.slice(0, 16)}`;
}

/** Whether the request carries a dashboard session and no bearer credential (a bearer header wins, as on management routes). */
export function usesSession(req: IncomingMessage): boolean {
  return req.headers.authorization === undefined && cookiesOf(req)[SESSION_COOKIE] !== undefined;
}

/**
 * The caller of an inference route made with a dashboard session: the same checks as every other
 * route the session calls (live session, seat, CSRF on a POST, and `permission` for the person's role), then a caller charged as ADR 0092 (docs/adr, "Let a dashboard session
 * call inference routes") says: to the person (`sessionKeyHash`); to the workspace of the key the
 * session was exchanged from, or else the organisation's first workspace; bound by
 * the person's guardrails; with no key ceiling of its own (workspace and agent budgets and the
 * organisation's credits still bind).
 */
export async function resolveSessionCaller(deps: ManagementAuthDeps, req: IncomingMessage, res: ServerResponse, permission: Permission): Promise<Caller> {
  const principal = await resolvePrincipal(deps, req, res);
  // Inference routes count requests under their own limits (a key's), not the management limit.
  await admitPrincipal({ ...deps, rateLimit: undefined }, principal, permission, res);
  const session = principal.session ? await deps.sessions.get(principal.session.tokenHash) : null;
  if (!session || !principal.session) throw new DomainError("unauthorized", "the dashboard session has ended; sign in again", { details: { field: SESSION_COOKIE } });
  const hash = sessionKeyHash(principal.orgId, principal);
  if (hash === null) throw new DomainError("unauthorized", "the dashboard session has no person and no key to charge", { details: { field: SESSION_COOKIE } });
  return {
    orgId: principal.orgId,
    operator: principal.operator,
    memberUserId: principal.userId,
    key: {
      hash,
      prefix: "session",
      name: principal.keyName ? `Dashboard (${principal.keyName})` : "Dashboard",
      label: "dashboard",
      class: "inference",
      workspaceId: session.chargeWorkspaceId,
      workspaceName: session.chargeWorkspaceName,
      limitNanos: null,
      limitReset: null,
      limitMode: "hard",
      includeByokInLimit: false,
      paused: false,
      pausedReason: null,
      expiresAt: null,
    },
  };
}

/**
 * An inference key (bearer), or else a dashboard session (cookie) holding `permission`. A request
 * with neither is refused as a key-only route refuses it (401, naming Authorization).
 */
export function createKeyOrSessionResolver(deps: ManagementAuthDeps, permission: Permission): ResolveCaller {
  return async (req, res) => {
    if (usesSession(req)) return resolveSessionCaller(deps, req, res, permission);
    return callerOf(await resolveBearerKey(deps.keys, req, res, { allow: ["inference"] }));
  };
}
