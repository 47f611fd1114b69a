import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { pathParams, refusals } from "./envelopes";

/**
 * What the sign-in routes answer besides JSON: the identity-provider redirects and the CORS
 * preflight of the PKCE exchange. Their JSON routes are described with the others
 * (@router/management-api).
 */
export function registerSignInPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "options",
    path: "/v1/auth/keys",
    summary: "CORS preflight of the PKCE exchange (any origin, no credentials)",
    responses: { 204: { description: "The CORS headers" } },
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
}
