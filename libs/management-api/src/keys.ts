import { z } from "zod";
import { dataOf, nanodollars, pageOf, route, timestamp, usd } from "./route";

// ---- bodies and query -------------------------------------------------------------------------

// A bigint column holds about 9.2e9 USD in nanodollars; a billion leaves room for spend past it.
const MAX_LIMIT_USD = 1_000_000_000;
const limitUsd = z.number().min(0).max(MAX_LIMIT_USD);
const windowKind = z.enum(["daily", "weekly", "monthly", "lifetime"]);
const limitMode = z.enum(["hard", "soft"]);
const keyClass = z.enum(["inference", "management"]);
const workspaceId = z.string().regex(/^ws_[0-9A-Za-z]{1,64}$/, "expected a workspace id (ws_...)");

/** `POST /v1/keys`. */
export const createKeyBody = z.object({
  name: z.string().trim().min(1).max(200).nullable().optional(),
  limit: limitUsd.nullable().optional(),
  limit_reset: windowKind.nullable().optional(),
  limit_mode: limitMode.default("hard"),
  include_byok_in_limit: z.boolean().default(false),
  workspace_id: workspaceId.optional(),
  class: keyClass.default("inference"),
});

/** `PATCH /v1/keys/{hash}`: at least one field (the gateway checks that after parsing). */
export const patchKeyBody = z.object({
  limit: limitUsd.nullable().optional(),
  limit_reset: windowKind.nullable().optional(),
  limit_mode: limitMode.optional(),
  include_byok_in_limit: z.boolean().optional(),
  workspace_id: workspaceId.optional(),
  paused: z.boolean().optional(),
});

/** `GET /v1/keys`: revoked keys are left out unless asked for. */
export const listKeysQuery = z.object({
  include_disabled: z
    .enum(["true", "false", "1", "0"])
    .optional()
    .transform((v) => v === "true" || v === "1"),
});

// ---- answers ----------------------------------------------------------------------------------

export const keyRow = z
  .object({
    hash: z.string(),
    prefix: z.string(),
    name: z.string().nullable(),
    label: z.string(),
    class: keyClass,
    disabled: z.boolean(),
    limit: usd.nullable(),
    limit_nanodollars: nanodollars.nullable(),
    limit_reset: windowKind.nullable(),
    limit_mode: limitMode,
    include_byok_in_limit: z.boolean(),
    workspace_id: z.string(),
    usage: usd.nullable().meta({ description: "USD spent in the limit's current window; null without a limit" }),
    limit_remaining: usd.nullable(),
    limit_resets_at: timestamp.nullable(),
    paused: z.boolean(),
    paused_reason: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
    expires_at: timestamp.nullable(),
    external_user: z.string().nullable(),
  })
  .meta({ id: "KeyRow" });

export const callingKey = z
  .object({
    label: z.string(),
    limit: usd.nullable(),
    limit_remaining: usd.nullable(),
    usage: usd,
    limit_reset: windowKind.nullable(),
    limit_mode: limitMode,
    include_byok_in_limit: z.boolean(),
    is_free_tier: z.boolean(),
  })
  .meta({ id: "CallingKey" });

/** A new key: the plaintext is in this answer only. */
export const createdKey = z.object({ key: z.string(), hash: z.string(), name: z.string().nullable(), class: keyClass });

export const patchedKey = z.object({
  hash: z.string(),
  name: z.string().nullable(),
  class: keyClass,
  limit: usd.nullable(),
  limit_reset: windowKind.nullable(),
  limit_mode: limitMode,
  include_byok_in_limit: z.boolean(),
  workspace_id: z.string(),
  paused: z.boolean(),
  paused_reason: z.string().nullable(),
  updated_at: timestamp,
});

// ---- the routes -------------------------------------------------------------------------------

const owner = "console";
const serving = "forwarded" as const;
const management = { owner, serving, access: "management" } as const;

export const KEY_ROUTES = [
  route({ owner, serving, access: "inference", permission: null, method: "get", path: "/v1/key", summary: "The calling inference key's limit and usage", answer: dataOf(callingKey) }),
  route({ ...management, permission: "read", method: "get", path: "/v1/keys", summary: "List keys", query: listKeysQuery, answer: pageOf(keyRow) }),
  route({ ...management, permission: "config:write", method: "post", path: "/v1/keys", summary: "Create a key; the plaintext is returned once", body: createKeyBody, answer: dataOf(createdKey), status: 201 }),
  route({
    ...management,
    permission: "config:write",
    method: "patch",
    path: "/v1/keys/:hash",
    summary: "Change a key's limit, move it, or pause and resume it",
    body: patchKeyBody,
    answer: dataOf(patchedKey),
    refused: [409],
  }),
  route({ ...management, permission: "config:write", method: "delete", path: "/v1/keys/:hash", summary: "Revoke a key", answer: dataOf(z.object({ deleted: z.literal(true) })) }),
];
