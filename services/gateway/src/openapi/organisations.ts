import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { putBody as loggingPutBody } from "../logging-settings/logging-routes";
import { renameBody } from "../organisations/organisation-routes";
import { nameBody as workspaceNameBody } from "../organisations/workspace-routes";
import { createBody as invitationCreateBody, tokenBody as invitationTokenBody } from "../people/invitation-routes";
import { roleBody } from "../people/member-routes";
import { dataOf, json, jsonBody, pageOf, pathParams, refusals, SECURITY, timestamp } from "./envelopes";

const deleted = (field: string) => dataOf(z.object({ [field]: z.boolean() }));

// The organisation view carries more fields than callers need to rely on; its stable ones are named.
const organisation = z.looseObject({ id: z.string(), name: z.string() }).meta({ id: "Organisation" });
const workspace = z
  .object({ id: z.string(), name: z.string(), slug: z.string(), created_at: timestamp, active_keys: z.number().int(), is_current: z.boolean() })
  .meta({ id: "Workspace" });
const member = z
  .object({
    user_id: z.string(),
    role: z.string(),
    role_name: z.string(),
    joined_at: timestamp,
    name: z.string().nullable(),
    email: z.string().nullable(),
    avatar_url: z.string().nullable(),
    provider: z.string().nullable(),
    is_you: z.boolean(),
  })
  .meta({ id: "Member" });
const invitation = z
  .object({ id: z.string(), role: z.string(), created_at: timestamp, expires_at: timestamp, created_by_name: z.string().nullable() })
  .meta({ id: "Invitation" });
const logging = z
  .object({
    enabled: z.boolean(),
    key_include: z.array(z.string()),
    key_exclude: z.array(z.string()),
    retention_days: z.number().int(),
    locked: z.boolean(),
    purposes: z.array(z.string()),
    consented_at: timestamp.nullable(),
  })
  .meta({ id: "LoggingSettings" });

/** The organisation, its workspaces, members, invitations and content-logging settings. */
export function registerOrganisationPaths(registry: OpenAPIRegistry): void {
  const manage = (
    method: "get" | "post" | "put" | "patch" | "delete",
    path: string,
    summary: string,
    ok: ReturnType<typeof json>,
    request: Parameters<OpenAPIRegistry["registerPath"]>[0]["request"] = undefined,
    status = 200,
  ) =>
    registry.registerPath({
      method,
      path,
      summary,
      security: SECURITY.management,
      request,
      responses: { [status]: ok, ...refusals(400, 401, 403, 404, 429) },
    });

  manage("get", "/v1/organization", "The caller's organisation", json("Organisation", dataOf(organisation)));
  manage("patch", "/v1/organization", "Rename the organisation", json("Organisation", dataOf(organisation)), { body: jsonBody(renameBody) });

  manage("get", "/v1/workspaces", "List workspaces", json("Workspaces", pageOf(workspace)));
  manage("post", "/v1/workspaces", "Create a workspace", json("Workspace", dataOf(workspace)), { body: jsonBody(workspaceNameBody) }, 201);
  manage("patch", "/v1/workspaces/{id}", "Rename a workspace", json("Workspace", dataOf(workspace)), {
    params: pathParams("id"),
    body: jsonBody(workspaceNameBody),
  });
  manage("delete", "/v1/workspaces/{id}", "Remove a workspace", json("Deleted", deleted("deleted")), { params: pathParams("id") });

  manage(
    "get",
    "/v1/organization/members",
    "List members",
    json("Members", pageOf(member).extend({ your_role: z.string() })),
  );
  manage("patch", "/v1/organization/members/{userId}", "Change a member's role", json("Role", dataOf(z.object({ user_id: z.string(), role: z.string() }))), {
    params: pathParams("userId"),
    body: jsonBody(roleBody),
  });
  manage("delete", "/v1/organization/members/{userId}", "Remove a member", json("Removed", deleted("removed")), { params: pathParams("userId") });

  manage("get", "/v1/organization/invitations", "List open invitations", json("Invitations", pageOf(invitation)));
  manage(
    "post",
    "/v1/organization/invitations",
    "Invite someone; the link is returned once",
    json("Invitation", dataOf(invitation.extend({ url: z.string() }))),
    { body: jsonBody(invitationCreateBody) },
    201,
  );
  manage("delete", "/v1/organization/invitations/{id}", "Revoke an invitation", json("Revoked", deleted("revoked")), { params: pathParams("id") });
  registry.registerPath({
    method: "post",
    path: "/v1/invitations/lookup",
    summary: "What an invitation token is for",
    request: { body: jsonBody(invitationTokenBody) },
    responses: {
      200: json(
        "The invitation",
        dataOf(z.object({ org_name: z.string(), role: z.string(), role_name: z.string(), expires_at: timestamp })),
      ),
      ...refusals(400, 404, 429),
    },
  });
  registry.registerPath({
    method: "post",
    path: "/v1/invitations/accept",
    summary: "Accept an invitation as the signed-in person (a management key gets 403)",
    security: SECURITY.session,
    request: { body: jsonBody(invitationTokenBody) },
    responses: { 200: json("The organisation joined", dataOf(z.object({ org_id: z.string() }))), ...refusals(400, 401, 403, 404, 429) },
  });

  manage("get", "/v1/logging", "Content-logging settings", json("Settings", dataOf(logging)));
  manage("put", "/v1/logging", "Change content-logging settings", json("Settings", dataOf(logging)), { body: jsonBody(loggingPutBody) });
}
