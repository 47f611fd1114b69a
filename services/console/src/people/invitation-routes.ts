import { Router, type Request, type Response } from "express";
import { ROLE_NAMES } from "@router/access";
import type { Db } from "@router/db";
import { DomainError, invalid, notFound } from "@router/errors";
import { parseInput } from "@router/http-kit";
import { people } from "@router/management-api";
import type { Clock } from "@router/money";
import type { Principal } from "@router/access";
import { requirePrincipal, type Authorize } from "../auth/principal";
import { evictSessions, objectBody } from "@router/http-kit";
import { lockOrganisation } from "../organisations/organisation-store";
import type { SessionIssuer } from "../sessions/session-issuer";
import {
  countOpenInvitations,
  findOpenInvitation,
  insertInvitation,
  listOpenInvitations,
  markAccepted,
  MAX_OPEN_INVITATIONS,
  revokeInvitation,
  type Invitation,
} from "./invitation-store";
import { insertMember } from "./member-store";
import { getUser } from "./user-store";

export interface InvitationRoutesDeps {
  db: Db;
  authorize: Authorize;
  clock: Clock;
  issuer: SessionIssuer;
  /** The deployment's public base URL; links are `<url>/invite#token=...`. */
  publicUrl: () => string;
}

const INVITATION_ID = /^inv_[0-9A-Za-z]{1,64}$/;

function invitationView(i: Invitation) {
  return {
    id: i.id,
    role: i.role,
    created_at: i.createdAt.toISOString(),
    expires_at: i.expiresAt.toISOString(),
    created_by_name: i.createdByName,
  };
}

/** Who an invitation says it is from: the person's name, else the management key's. */
async function inviterName(db: Db, p: Principal): Promise<string | null> {
  const user = p.userId ? await getUser(db, p.userId) : null;
  return user?.name ?? user?.email ?? p.keyName;
}

/**
 * Invitations: list, create and revoke (owners only); the public lookup (token in the body, so it
 * stays out of access logs); accept (a signed-in person: takes the seat and moves the session).
 */
export function invitationRoutes(deps: InvitationRoutesDeps): Router {
  const router = Router();
  const owners = deps.authorize("members:write");

  router.get("/v1/organization/invitations", owners, async (_req: Request, res: Response) => {
    const { orgId } = requirePrincipal(res);
    const open = await listOpenInvitations(deps.db, orgId, deps.clock.now());
    res.json({ data: open.map(invitationView), next_cursor: null });
  });

  router.post("/v1/organization/invitations", owners, async (req: Request, res: Response) => {
    const p = requirePrincipal(res);
    const { role } = parseInput(people.invitationBody, objectBody(req, ["role"]));
    const createdByName = await inviterName(deps.db, p);
    const { invitation, token } = await deps.db.tx(async (q) => {
      const now = deps.clock.now();
      await lockOrganisation(q, p.orgId);
      if ((await countOpenInvitations(q, p.orgId, now)) >= MAX_OPEN_INVITATIONS) {
        throw new DomainError("conflict", `an organisation holds at most ${MAX_OPEN_INVITATIONS} open invitations; revoke one first`, {
          details: { limit: MAX_OPEN_INVITATIONS },
        });
      }
      return insertInvitation(q, { orgId: p.orgId, role, createdByUser: p.userId, createdByName, now });
    });
    // The link is returned once; only the token's hash is kept.
    res.status(201).json({ data: { ...invitationView(invitation), url: `${deps.publicUrl()}/invite#token=${token}` } });
  });

  router.delete("/v1/organization/invitations/:id", owners, async (req: Request, res: Response) => {
    const { orgId } = requirePrincipal(res);
    const id = String(req.params.id ?? "");
    if (!INVITATION_ID.test(id)) throw invalid("id", "expected an invitation id (inv_...)");
    const revoked = await revokeInvitation(deps.db, orgId, id, deps.clock.now());
    if (revoked === null) throw notFound("invitation");
    res.json({ data: { revoked } });
  });

  router.post("/v1/invitations/lookup", async (req: Request, res: Response) => {
    const { token } = parseInput(people.tokenBody, objectBody(req, ["token"]));
    const found = await findOpenInvitation(deps.db, token, deps.clock.now());
    if (!found) throw notFound("invitation");
    res.json({ data: { org_name: found.orgName, role: found.role, role_name: ROLE_NAMES[found.role], expires_at: found.expiresAt.toISOString() } });
  });

  router.post("/v1/invitations/accept", deps.authorize("read", { sessionOnly: true, person: true }), async (req: Request, res: Response) => {
    const p = requirePrincipal(res);
    const { token } = parseInput(people.tokenBody, objectBody(req, ["token"]));
    const userId = p.userId!;
    const previous = p.session!.tokenHash;
    const issued = await deps.db.tx(async (q) => {
      const now = deps.clock.now();
      const invitation = await findOpenInvitation(q, token, now, { forUpdate: true });
      if (!invitation) throw notFound("invitation");
      if (!(await insertMember(q, invitation.orgId, userId, invitation.role, now))) {
        throw new DomainError("conflict", "you already hold a seat in this organisation; switch to it instead");
      }
      await markAccepted(q, invitation.id, userId, now);
      await deps.issuer.end(q, previous);
      return deps.issuer.issue(q, { orgId: invitation.orgId, userId, keyHash: null, authMethod: "invitation" });
    });
    evictSessions(res, [previous]);
    deps.issuer.send(req, res, issued);
    res.json({ data: { org_id: issued.orgId } });
  });

  return router;
}
