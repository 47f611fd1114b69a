import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { exchangeBody as pkceExchangeBody } from "../pkce/pkce-routes";
import { requestFields as pkceRequestFields } from "../pkce/pkce-request";
import { exchangeBody as sessionExchangeBody, switchBody } from "../sessions/session-routes";
import { challengeBody as walletChallengeBody, verifyBody as walletVerifyBody } from "../sign-in/wallet-routes";
import { dataOf, json, jsonBody, looseObject, pageOf, pathParams, refusals, SECURITY, timestamp } from "./envelopes";

// The session view names the organisation, person and role; its fields are described in the README.
const session = looseObject;
const orgSwitch = dataOf(z.object({ org_id: z.string() }));

/** Sessions, organisation switching, OAuth PKCE for apps, and the sign-in methods. */
export function registerSignInPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "post",
    path: "/v1/auth/exchange",
    summary: "Exchange a management key for a dashboard session (sets the cookies)",
    request: { body: jsonBody(sessionExchangeBody) },
    responses: { 200: json("The session", dataOf(session)), ...refusals(400, 401, 429) },
  });
  registry.registerPath({
    method: "get",
    path: "/v1/auth/session",
    summary: "The current dashboard session",
    security: SECURITY.session,
    responses: { 200: json("The session", dataOf(session)), ...refusals(401, 403, 429) },
  });
  registry.registerPath({
    method: "post",
    path: "/v1/auth/signout",
    summary: "End the current session (clears the cookies)",
    security: SECURITY.session,
    responses: { 200: json("Whether a session ended", dataOf(z.object({ ended: z.boolean() }))), ...refusals(403) },
  });
  registry.registerPath({
    method: "get",
    path: "/v1/auth/organizations",
    summary: "The organisations the caller may act in",
    security: SECURITY.management,
    responses: {
      200: json(
        "Organisations",
        pageOf(z.object({ id: z.string(), name: z.string().nullable(), role: z.string(), role_name: z.string(), current: z.boolean() })),
      ),
      ...refusals(401, 403, 429),
    },
  });
  registry.registerPath({
    method: "post",
    path: "/v1/auth/switch",
    summary: "Switch the session to another organisation of the person",
    security: SECURITY.management,
    request: { body: jsonBody(switchBody) },
    responses: { 200: json("The organisation now current", orgSwitch), ...refusals(400, 401, 403, 404, 429) },
  });

  registry.registerPath({
    method: "get",
    path: "/v1/auth/pkce",
    summary: "Describe an OAuth PKCE authorization request (for the consent page)",
    request: { query: pkceRequestFields },
    responses: {
      200: json(
        "What the app asks for",
        dataOf(
          z.object({
            callback_url: z.string().nullable(),
            host: z.string().nullable(),
            headless: z.boolean(),
            key_label: z.string(),
            code_challenge_method: z.literal("S256"),
            limit: z.number(),
            expires_in_days: z.number().int(),
          }),
        ),
      ),
      ...refusals(400, 429),
    },
  });
  registry.registerPath({
    method: "post",
    path: "/v1/auth/pkce/approve",
    summary: "Approve an OAuth PKCE request; answers the code and where to send it",
    security: SECURITY.management,
    request: { body: jsonBody(pkceRequestFields) },
    responses: { 200: json("The authorization code", dataOf(looseObject)), ...refusals(400, 401, 403, 429) },
  });
  registry.registerPath({
    method: "post",
    path: "/v1/auth/keys",
    summary: "Exchange an OAuth PKCE code for an inference key (CORS: any origin)",
    request: { body: jsonBody(pkceExchangeBody) },
    responses: { 200: json("The key, returned once", z.looseObject({ key: z.string() })), ...refusals(400, 403, 429) },
  });
  registry.registerPath({
    method: "options",
    path: "/v1/auth/keys",
    summary: "CORS preflight of the PKCE exchange (any origin, no credentials)",
    responses: { 204: { description: "The CORS headers" } },
  });

  registry.registerPath({
    method: "get",
    path: "/v1/auth/methods",
    summary: "The sign-in methods this deployment offers",
    responses: {
      200: json("Methods", dataOf(z.object({ management_key: z.boolean(), oauth: z.array(z.string()), wallet: z.boolean() }))),
    },
  });
  const provider = { params: pathParams("provider") };
  registry.registerPath({
    method: "get",
    path: "/v1/auth/oauth/{provider}/start",
    summary: "Start sign-in with an identity provider (redirects to it)",
    request: provider,
    responses: { 302: { description: "To the identity provider" }, ...refusals(404) },
  });
  registry.registerPath({
    method: "get",
    path: "/v1/auth/oauth/{provider}/callback",
    summary: "The identity provider's redirect back; signs in and redirects to the dashboard",
    request: provider,
    responses: { 302: { description: "To the dashboard or the sign-in page" }, ...refusals(400, 404) },
  });
  registry.registerPath({
    method: "post",
    path: "/v1/auth/wallet/challenge",
    summary: "A Sign-In with Ethereum message to sign",
    request: { body: jsonBody(walletChallengeBody) },
    responses: {
      200: json("The message", dataOf(z.object({ message: z.string(), nonce: z.string(), expires_at: timestamp }))),
      ...refusals(400, 404, 429),
    },
  });
  registry.registerPath({
    method: "post",
    path: "/v1/auth/wallet/verify",
    summary: "Verify the signed message and start a session",
    request: { body: jsonBody(walletVerifyBody) },
    responses: {
      200: json("The session", dataOf(z.object({ expires_at: timestamp, org_id: z.string(), is_new_user: z.boolean() }))),
      ...refusals(400, 401, 404),
    },
  });
}
