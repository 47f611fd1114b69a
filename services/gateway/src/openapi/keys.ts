import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { createBody as keyCreateBody, listQuery as keyListQuery, patchBody as keyPatchBody } from "../keys/key-routes";
import { createBody as credentialCreateBody, patchBody as credentialPatchBody } from "../provider-keys/provider-key-routes";
import { dataOf, json, jsonBody, pageOf, pathParams, refusals, SECURITY, timestamp } from "./envelopes";

const usd = z.number().meta({ description: "USD" });
const limitReset = z.enum(["daily", "weekly", "monthly", "lifetime"]).nullable();
const limitMode = z.enum(["hard", "soft"]);

const keyRow = z
  .object({
    hash: z.string(),
    prefix: z.string(),
    name: z.string().nullable(),
    label: z.string(),
    class: z.enum(["inference", "management"]),
    disabled: z.boolean(),
    limit: usd.nullable(),
    limit_nanodollars: z.string().nullable(),
    limit_reset: limitReset,
    limit_mode: limitMode,
    include_byok_in_limit: z.boolean(),
    workspace_id: z.string(),
    usage: usd.nullable(),
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

const callingKey = z
  .object({
    label: z.string(),
    limit: usd.nullable(),
    limit_remaining: usd.nullable(),
    usage: usd,
    limit_reset: limitReset,
    limit_mode: limitMode,
    include_byok_in_limit: z.boolean(),
    is_free_tier: z.boolean(),
  })
  .meta({ id: "CallingKey" });

const patchedKey = z.object({
  hash: z.string(),
  name: z.string().nullable(),
  class: z.enum(["inference", "management"]),
  limit: usd.nullable(),
  limit_reset: limitReset,
  limit_mode: limitMode,
  include_byok_in_limit: z.boolean(),
  workspace_id: z.string(),
  paused: z.boolean(),
  paused_reason: z.string().nullable(),
  updated_at: timestamp,
});

const credential = z
  .object({
    id: z.string(),
    provider_slug: z.string(),
    name: z.string().nullable(),
    key_hint: z.string().nullable(),
    tier: z.enum(["prioritized", "fallback"]),
    priority: z.number().int(),
    fallback_policy: z.enum(["platform", "none_for_models", "none_for_provider"]),
    model_filter: z.record(z.string(), z.unknown()),
    settings: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("A cloud credential's showable part: endpoint, region, project, deployments (Azure OpenAI, Bedrock, Vertex AI); absent for an API key"),
    disabled: z.boolean(),
    created_at: timestamp,
    last_used_at: timestamp.nullable(),
  })
  .meta({ id: "ProviderCredential" });

/** API keys (`/v1/key`, `/v1/keys`) and provider credentials (`/v1/provider-keys`). */
export function registerKeyPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/v1/key",
    summary: "The calling inference key's limit and usage",
    security: SECURITY.inference,
    responses: { 200: json("The calling key", dataOf(callingKey)), ...refusals(401, 403) },
  });
  registry.registerPath({
    method: "get",
    path: "/v1/keys",
    summary: "List keys",
    security: SECURITY.management,
    request: { query: keyListQuery },
    responses: { 200: json("Key rows", pageOf(keyRow)), ...refusals(400, 401, 403, 429) },
  });
  registry.registerPath({
    method: "post",
    path: "/v1/keys",
    summary: "Create a key; the plaintext is returned once",
    security: SECURITY.management,
    request: { body: jsonBody(keyCreateBody) },
    responses: {
      201: json(
        "The created key",
        dataOf(z.object({ key: z.string(), hash: z.string(), name: z.string().nullable(), class: z.enum(["inference", "management"]) })),
      ),
      ...refusals(400, 401, 403, 404, 429),
    },
  });
  registry.registerPath({
    method: "patch",
    path: "/v1/keys/{hash}",
    summary: "Change a key's limit, move it, or pause and resume it",
    security: SECURITY.management,
    request: { params: pathParams("hash"), body: jsonBody(keyPatchBody) },
    responses: { 200: json("The key after the change", dataOf(patchedKey)), ...refusals(400, 401, 403, 404, 429) },
  });
  registry.registerPath({
    method: "delete",
    path: "/v1/keys/{hash}",
    summary: "Revoke a key",
    security: SECURITY.management,
    request: { params: pathParams("hash") },
    responses: { 200: json("Revoked", dataOf(z.object({ deleted: z.boolean() }))), ...refusals(400, 401, 403, 404, 429) },
  });

  registry.registerPath({
    method: "get",
    path: "/v1/provider-keys",
    summary: "List provider credentials (keys are never returned)",
    security: SECURITY.management,
    responses: { 200: json("Provider credential rows", pageOf(credential)), ...refusals(401, 403, 429) },
  });
  registry.registerPath({
    method: "post",
    path: "/v1/provider-keys",
    summary: "Add a provider credential",
    security: SECURITY.management,
    request: { body: jsonBody(credentialCreateBody) },
    responses: { 201: json("The credential", dataOf(credential)), ...refusals(400, 401, 403, 409, 429) },
  });
  registry.registerPath({
    method: "patch",
    path: "/v1/provider-keys/{id}",
    summary: "Enable or disable a provider credential",
    security: SECURITY.management,
    request: { params: pathParams("id"), body: jsonBody(credentialPatchBody) },
    responses: {
      200: json("The new state", dataOf(z.object({ id: z.string(), disabled: z.boolean() }))),
      ...refusals(400, 401, 403, 404, 429),
    },
  });
  registry.registerPath({
    method: "delete",
    path: "/v1/provider-keys/{id}",
    summary: "Delete a provider credential",
    security: SECURITY.management,
    request: { params: pathParams("id") },
    responses: { 200: json("Deleted", dataOf(z.object({ deleted: z.boolean() }))), ...refusals(400, 401, 403, 404, 429) },
  });
}
