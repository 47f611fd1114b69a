import { Router, type Request, type Response } from "express";
import { ROLE_NAMES } from "@router/access";
import type { Db } from "@router/db";
import { DomainError, invalid, notFound } from "@router/errors";
import { parseInput } from "@router/http-kit";
import { people } from "@router/management-api";
import type { Clock } from "@router/money";
import { requirePrincipal, type Authorize } from "../auth/principal";
import { evictKeys, evictSessions, objectBody } from "@router/http-kit";
import { lockOrganisation } from "../organisations/organisation-store";
import { withdrawPkceCodesOf } from "../pkce/pkce-codes";
import { endSessionsOfMember, sessionsOfMember } from "../sessions/session-store";
import {
  deleteMember,
  keysOfMember,
  listMembers,
  memberRole,
  ownerCount,
  revokeKeysOfMember,
  setMemberRole,
  type Member,
} from "./member-store";

export interface MemberRoutesDeps {
  db: Db;
  authorize: Authorize;
  clock: Clock;
}

const USER_ID = /^usr_[0-9A-Za-z]{1,64}$/;

function userIdParam(req: Request): string {
  const id = String(req.params.userId ?? "");
  if (!USER_ID.test(id)) throw invalid("userId", "expected a user id (usr_...)");
  return id;
}

function lastOwner(action: string): DomainError {
  return new DomainError("conflict", `cannot ${action} the organisation's last owner; make someone else an owner first`);
}

function memberView(m: Member, callerUserId: string | null) {
  return {
    user_id: m.userId,
    role: m.role,
    role_name: ROLE_NAMES[m.role],
    joined_at: m.joinedAt.toISOString(),
    name: m.name,
    email: m.email,
    avatar_url: m.avatarUrl,
    provider: m.provider,
    is_you: m.userId === callerUserId,
  };
}

/** Members: list (any role, owners first, with the caller's own role), change role and remove (owners only). */
export function memberRoutes(deps: MemberRoutesDeps): Router {
  const router = Router();

  // A person's role and seat live in the edge's key and session caches: the answer names what they hold.
  const forgetMember = async (res: Response, orgId: string, userId: string, endedSessions: string[]) => {
    evictKeys(res, await keysOfMember(deps.db, orgId, userId));
    evictSessions(res, [...endedSessions, ...(await sessionsOfMember(deps.db, orgId, userId, deps.clock.now()))]);
  };

  router.get("/v1/organization/members", deps.authorize("read"), async (_req: Request, res: Response) => {
    const p = requirePrincipal(res);
    const members = await listMembers(deps.db, p.orgId);
    res.json({ data: members.map((m) => memberView(m, p.userId)), next_cursor: null, your_role: p.role });
  });

  router.patch("/v1/organization/members/:userId", deps.authorize("members:write"), async (req: Request, res: Response) => {
    const p = requirePrincipal(res);
    const userId = userIdParam(req);
    const { role } = parseInput(people.roleBody, objectBody(req, ["role"]));
    await deps.db.tx(async (q) => {
      await lockOrganisation(q, p.orgId);
      const current = await memberRole(q, p.orgId, userId);
      if (current === null) throw notFound("member");
      if (current === "owner" && role !== "owner" && (await ownerCount(q, p.orgId)) <= 1) throw lastOwner("demote");
      await setMemberRole(q, p.orgId, userId, role);
    });
    await forgetMember(res, p.orgId, userId, []);
    res.json({ data: { user_id: userId, role } });
  });

  router.delete("/v1/organization/members/:userId", deps.authorize("members:write"), async (req: Request, res: Response) => {
    const p = requirePrincipal(res);
    const userId = userIdParam(req);
    const now = deps.clock.now();
    const ended = await deps.db.tx(async (q) => {
      await lockOrganisation(q, p.orgId);
      const current = await memberRole(q, p.orgId, userId);
      if (current === null) return null;
      if (current === "owner" && (await ownerCount(q, p.orgId)) <= 1) throw lastOwner("remove");
      await deleteMember(q, p.orgId, userId);
      // The seat goes with the person's keys (inference keys too: docs/adr, ADR 0012),
      // their PKCE approvals not yet exchanged, and their sessions in this organisation.
      await revokeKeysOfMember(q, p.orgId, userId, now);
      await withdrawPkceCodesOf(q, p.orgId, userId);
      return endSessionsOfMember(q, p.orgId, userId, now);
    });
    if (ended !== null) await forgetMember(res, p.orgId, userId, ended);
    res.json({ data: { removed: ended !== null } });
  });

  return router;
}
