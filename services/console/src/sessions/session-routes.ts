import { Router, type Request, type Response } from "express";
import { ROLE_NAMES } from "@router/access";
import type { Db } from "@router/db";
import { DomainError, notFound } from "@router/errors";
import { parseInput } from "@router/http-kit";
import { sessions } from "@router/management-api";
import type { Clock } from "@router/money";
import type { Authorize } from "../auth/principal";
import type { Principal } from "@router/access";
import { requirePrincipal } from "../auth/principal";
import { objectBody } from "@router/http-kit";
import { claimedKeyClass, hashKey, keyClassOf, seatlessKey } from "@router/api-keys";
import { findKeyByHash } from "../keys/key-store";
import { getOrganisation } from "../organisations/organisation-store";
import { memberRole, membershipsOf } from "../people/member-store";
import { getUser } from "../people/user-store";
import { cookiesOf, csrfHolds, evictSessions, SESSION_COOKIE, sessionTokenHash } from "@router/http-kit";
import type { SessionIssuer } from "./session-issuer";
import type { AuthMethod } from "./session-store";

export interface SessionRoutesDeps {
  db: Db;
  authorize: Authorize;
  issuer: SessionIssuer;
  pepper: string;
  clock: Clock;
  csrfSecret: string;
}

/** The Session resource (in the service README). */
export async function sessionView(
  db: Db,
  s: { expiresAt: Date; orgId: string; keyName: string | null; userId: string | null; authMethod: AuthMethod },
) {
  const user = s.userId ? await getUser(db, s.userId) : null;
  return {
    expires_at: s.expiresAt.toISOString(),
    org_id: s.orgId,
    key_name: s.keyName,
    user: user && { id: user.id, name: user.name, email: user.email, avatar_url: user.avatarUrl, provider: user.provider },
    auth_method: s.authMethod,
  };
}

/** Sessions: exchange a management key, read the session, sign out, my organisations, switch. */
export function sessionRoutes(deps: SessionRoutesDeps): Router {
  const router = Router();

  router.post("/v1/auth/exchange", async (req: Request, res: Response) => {
    const { key: plaintext } = parseInput(sessions.exchangeKeyBody, objectBody(req, ["key"]));
    const claimed = claimedKeyClass(plaintext);
    if (claimed === "inference") {
      throw new DomainError("invalid_request", "key: this is an inference key (rt-v1-...); sign in with a management key (rt-mgmt-...)", {
        details: { field: "key" },
      });
    }
    if (claimed !== "management") {
      throw new DomainError("invalid_request", "key: expected a management key (rt-mgmt-...)", { details: { field: "key" } });
    }
    // The right prefix but a value no key has (cut short, mistyped): unknown, like a revoked one.
    const key = keyClassOf(plaintext) === "management" ? await findKeyByHash(deps.db, hashKey(plaintext, deps.pepper)) : undefined;
    const now = deps.clock.now().getTime();
    if (!key || key.class !== "management" || key.disabled || (key.expiresAt && key.expiresAt.getTime() <= now)) {
      throw new DomainError("unauthorized", "key: unknown, revoked or expired management key", { details: { field: "key" } });
    }
    if (seatlessKey(key)) {
      throw new DomainError("unauthorized", "key: this key's person no longer has a seat in its organisation", { details: { field: "key" } });
    }
    const issued = await deps.issuer.issue(deps.db, { orgId: key.orgId, userId: key.userId, keyHash: key.hash, authMethod: "management_key" });
    deps.issuer.send(req, res, issued);
    res.json({
      data: await sessionView(deps.db, { ...issued, keyName: key.name, userId: key.userId, authMethod: "management_key" }),
    });
  });

  router.get("/v1/auth/session", deps.authorize("read", { sessionOnly: true }), async (_req: Request, res: Response) => {
    const p = requirePrincipal(res);
    const session = p.session!;
    res.json({ data: await sessionView(deps.db, { ...p, expiresAt: session.expiresAt, authMethod: session.authMethod }) });
  });

  // Always succeeds and clears both cookies; the session itself ends only when the request proves
  // it comes from the dashboard (CSRF), so another site cannot sign a person out.
  router.post("/v1/auth/signout", async (req: Request, res: Response) => {
    const token = cookiesOf(req)[SESSION_COOKIE];
    let ended = false;
    if (token && csrfHolds(req, token, deps.csrfSecret)) {
      const hash = sessionTokenHash(token);
      ended = await deps.issuer.end(deps.db, hash);
      evictSessions(res, [hash]);
    }
    deps.issuer.clear(req, res);
    res.json({ data: { ended } });
  });

  router.get("/v1/auth/organizations", deps.authorize("read"), async (_req: Request, res: Response) => {
    const p = requirePrincipal(res);
    if (p.userId === null) {
      const org = await getOrganisation(deps.db, p.orgId);
      res.json({ data: [{ id: p.orgId, name: org?.name ?? null, role: p.role, role_name: ROLE_NAMES[p.role], current: true }], next_cursor: null });
      return;
    }
    const seats = await membershipsOf(deps.db, p.userId);
    res.json({
      data: seats.map((s) => ({ id: s.orgId, name: s.name, role: s.role, role_name: ROLE_NAMES[s.role], current: s.orgId === p.orgId })),
      next_cursor: null,
    });
  });

  router.post("/v1/auth/switch", deps.authorize("read"), async (req: Request, res: Response) => {
    const p = requirePrincipal(res);
    const { org_id: target } = parseInput(sessions.switchBody, objectBody(req, ["org_id"]));
    if (target === p.orgId) {
      res.json({ data: { org_id: target } });
      return;
    }
    if (p.userId === null || (await memberRole(deps.db, target, p.userId)) === null) throw notFound("organisation");
    if (!p.session) {
      throw new DomainError("invalid_request", "org_id: an API key belongs to one organisation; switch with a dashboard session", {
        details: { field: "org_id" },
      });
    }
    const issued = await moveSession(deps, p, p.session.tokenHash, target);
    evictSessions(res, [p.session.tokenHash]);
    deps.issuer.send(req, res, issued);
    res.json({ data: { org_id: target } });
  });

  return router;
}

/** Ends `tokenHash` and opens a session for the same person in `orgId`, in one transaction. */
function moveSession(deps: SessionRoutesDeps, p: Principal, tokenHash: string, orgId: string) {
  return deps.db.tx(async (q) => {
    await deps.issuer.end(q, tokenHash);
    return deps.issuer.issue(q, { orgId, userId: p.userId, keyHash: null, authMethod: p.session?.authMethod ?? "management_key" });
  });
}
