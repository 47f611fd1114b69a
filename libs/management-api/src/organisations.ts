import { z } from "zod";
import { dataOf, nanodollars, pageOf, route, timestamp, usd } from "./route";

// ---- names ------------------------------------------------------------------------------------

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A name people see (organisation, workspace, key label): trimmed, 1 to `max` characters, no control characters. */
export function displayName(max: number) {
  return z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(max, `must be at most ${max} characters`)
    .refine((s) => !CONTROL.test(s), "must not contain control characters");
}

export const ORGANISATION_NAME = displayName(80);
export const WORKSPACE_NAME = displayName(80);

// ---- bodies -----------------------------------------------------------------------------------

/** `PATCH /v1/organization`: only the name changes (id and slug never do). */
export const renameBody = z.object({ name: ORGANISATION_NAME });
/** `POST /v1/workspaces` and `PATCH /v1/workspaces/{id}`. */
export const workspaceNameBody = z.object({ name: WORKSPACE_NAME });

// ---- answers ----------------------------------------------------------------------------------

export const organisation = z
  .object({ id: z.string(), name: z.string(), slug: z.string(), plan: z.string(), created_at: timestamp, members: z.number().int() })
  .meta({ id: "Organisation" });

/** A workspace's budget as the ledger holds it (the ledger owns budgets; the row only shows them). */
export const workspaceBudgetSummary = z.object({
  interval: z.enum(["daily", "weekly", "monthly", "lifetime"]),
  limit_nanodollars: nanodollars.nullable(),
  include_byok: z.boolean(),
});

export const workspace = z
  .object({
    id: z.string(),
    name: z.string(),
    slug: z.string(),
    created_at: timestamp,
    active_keys: z.number().int(),
    spend_this_month: usd.meta({ description: "USD at list price (BYOK included), this UTC month, requests in flight included" }),
    budgets: z.array(workspaceBudgetSummary),
    is_current: z.boolean(),
  })
  .meta({ id: "Workspace" });

// ---- the routes -------------------------------------------------------------------------------

const owner = "console";
const serving = "forwarded" as const;
const management = { owner, serving, access: "management" } as const;

export const ORGANISATION_ROUTES = [
  route({ ...management, permission: "read", method: "get", path: "/v1/organization", summary: "The caller's organisation", answer: dataOf(organisation) }),
  route({ ...management, permission: "org:write", method: "patch", path: "/v1/organization", summary: "Rename the organisation", body: renameBody, answer: dataOf(organisation) }),
  route({ ...management, permission: "read", method: "get", path: "/v1/workspaces", summary: "List workspaces", answer: pageOf(workspace) }),
  route({ ...management, permission: "config:write", method: "post", path: "/v1/workspaces", summary: "Create a workspace", body: workspaceNameBody, answer: dataOf(workspace), status: 201, refused: [409] }),
  route({ ...management, permission: "config:write", method: "patch", path: "/v1/workspaces/:id", summary: "Rename a workspace", body: workspaceNameBody, answer: dataOf(workspace) }),
  route({ ...management, permission: "config:write", method: "delete", path: "/v1/workspaces/:id", summary: "Remove a workspace (no active keys, not the last one)", answer: dataOf(z.object({ deleted: z.literal(true) })), refused: [409] }),
];
