import { ASSIGNABLE_ROLES, ROLES } from "@router/access";
import { z } from "zod";
import { dataOf, pageOf, route, timestamp } from "./route";

// ---- bodies -----------------------------------------------------------------------------------

/** `PATCH /v1/organization/members/{userId}`: the new role (admin and read-only are not given out). */
export const roleBody = z.object({ role: z.enum(ASSIGNABLE_ROLES) });
/** `POST /v1/organization/invitations`: the role the invited person gets. */
export const invitationBody = z.object({ role: z.enum(ASSIGNABLE_ROLES) });
/** The invitation token, in the body so that it stays out of access logs. */
export const tokenBody = z.object({ token: z.string().min(1).max(200) });

// ---- answers ----------------------------------------------------------------------------------

const role = z.enum(ROLES);

export const member = z
  .object({
    user_id: z.string(),
    role,
    role_name: z.string(),
    joined_at: timestamp,
    name: z.string().nullable(),
    email: z.string().nullable(),
    avatar_url: z.string().nullable(),
    provider: z.string().nullable(),
    is_you: z.boolean(),
  })
  .meta({ id: "Member" });

export const invitation = z
  .object({ id: z.string(), role, created_at: timestamp, expires_at: timestamp, created_by_name: z.string().nullable() })
  .meta({ id: "Invitation" });

/** A new invitation: its link (`<public URL>/invite#token=...`) is returned this once. */
export const createdInvitation = invitation.extend({ url: z.string() });

export const invitationLookup = z.object({ org_name: z.string(), role, role_name: z.string(), expires_at: timestamp });

// ---- the routes -------------------------------------------------------------------------------

const owner = "console";
const serving = "forwarded" as const;
const management = { owner, serving, access: "management" } as const;

export const PEOPLE_ROUTES = [
  route({
    ...management,
    permission: "read",
    method: "get",
    path: "/v1/organization/members",
    summary: "List members, owners first, with the caller's own role",
    answer: pageOf(member).extend({ your_role: role }),
  }),
  route({
    ...management,
    permission: "members:write",
    method: "patch",
    path: "/v1/organization/members/:userId",
    summary: "Change a member's role",
    body: roleBody,
    answer: dataOf(z.object({ user_id: z.string(), role })),
    refused: [409],
  }),
  route({
    ...management,
    permission: "members:write",
    method: "delete",
    path: "/v1/organization/members/:userId",
    summary: "Remove a member (with their keys and sessions in the organisation)",
    answer: dataOf(z.object({ removed: z.boolean() })),
    refused: [409],
  }),
  route({ ...management, permission: "members:write", method: "get", path: "/v1/organization/invitations", summary: "List open invitations", answer: pageOf(invitation) }),
  route({
    ...management,
    permission: "members:write",
    method: "post",
    path: "/v1/organization/invitations",
    summary: "Invite someone; the link is returned once",
    body: invitationBody,
    answer: dataOf(createdInvitation),
    status: 201,
    refused: [409],
  }),
  route({
    ...management,
    permission: "members:write",
    method: "delete",
    path: "/v1/organization/invitations/:id",
    summary: "Revoke an invitation",
    answer: dataOf(z.object({ revoked: z.boolean() })),
  }),
  route({ owner, serving, access: "public", permission: null, method: "post", path: "/v1/invitations/lookup", summary: "What an invitation token is for", body: tokenBody, answer: dataOf(invitationLookup) }),
  route({
    ...management,
    sessionOnly: true,
    permission: "read",
    method: "post",
    path: "/v1/invitations/accept",
    summary: "Accept an invitation as the signed-in person (a management key gets 403)",
    body: tokenBody,
    answer: dataOf(z.object({ org_id: z.string() })),
    refused: [409],
  }),
];
