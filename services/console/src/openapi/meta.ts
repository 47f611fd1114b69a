import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { dataOf, json, refusals, SECURITY } from "./envelopes";

export const OPENAPI_JSON_PATH = "/openapi.json";
export const OPENAPI_YAML_PATH = "/openapi.yaml";

const rateLimiting = z
  .object({ store: z.enum(["memory", "redis"]), shared: z.boolean().meta({ description: "whether every gateway instance counts together" }) })
  .meta({ id: "RateLimiting" });
const health = z.object({ status: z.string(), version: z.string(), rate_limiting: rateLimiting }).meta({ id: "Health" });
const cacheCounters = z.object({ hit: z.number().int(), miss: z.number().int(), stale: z.number().int(), size: z.number().int() }).nullable();

/** Health, diagnostics, region, the dashboard's pages and CSP reports, and this description (uptime and probes are the console's, described with its routes). */
export function registerMetaPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/health",
    summary: "Health; 500 when the database is unreachable",
    responses: { 200: json("Healthy", health), 500: json("The database is unreachable", health) },
  });
  registry.registerPath({
    method: "get",
    path: "/readyz",
    summary: "Readiness (Kubernetes): the health check, 503 while draining",
    responses: { 200: json("Ready", health), 500: json("The database is unreachable", health), 503: json("Draining", health) },
  });
  registry.registerPath({
    method: "get",
    path: "/livez",
    summary: "Liveness (Kubernetes): never touches the database",
    responses: { 200: json("Alive", z.object({ status: z.string(), version: z.string() })) },
  });
  registry.registerPath({
    method: "get",
    path: "/v1/health",
    summary: "Operational diagnostics: only the operator organisation's management keys and sessions; 404 for anyone else",
    security: SECURITY.management,
    responses: {
      200: json(
        "Diagnostics",
        dataOf(
          z.object({
            status: z.enum(["ok", "error"]),
            version: z.string(),
            rate_limiting: rateLimiting,
            caches: z.object({ auth: cacheCounters, guardrails: cacheCounters, budgets: cacheCounters, byok: cacheCounters, catalog: cacheCounters, plans: cacheCounters }),
            endpoint_health_age_ms: z.number().int().nullable(),
          }),
        ),
      ),
      ...refusals(404, 429),
    },
  });
  registry.registerPath({
    method: "get",
    path: "/v1/region",
    summary: "The caller's coarse region, from the deployment's trusted edge headers",
    responses: {
      200: json("Region", dataOf(z.object({ region: z.string().nullable(), subdivision: z.string().nullable() }))),
      ...refusals(429),
    },
  });
  registry.registerPath({
    method: "get",
    path: "/",
    summary: "The gateway's address in a browser: to the dashboard (/signin, or /workspace with a session cookie)",
    responses: { 302: { description: "To /signin, or /workspace when the request carries a session cookie" } },
  });
  for (const [path, summary] of [
    ["/signin", "Dashboard page: sign in (the methods this deployment offers; `?error=<reason>` after a failed identity-provider sign-in)"],
    ["/auth", "Dashboard page: the consent screen of the OAuth PKCE flow (the describe route's query)"],
    ["/workspace", "Dashboard page: a signed-in person's home"],
    ["/invite", "Dashboard page: the invitation landing (`#token=...` in the fragment)"],
  ] as const) {
    registry.registerPath({
      method: "get",
      path,
      summary,
      responses: {
        200: { description: "The page (HTML), with a strict Content-Security-Policy reporting to /csp-report", content: { "text/html": { schema: z.string() } } },
        503: { description: "The dashboard is not built", content: { "text/plain": { schema: z.string() } } },
      },
    });
  }
  registry.registerPath({
    method: "get",
    path: "/assets/{file}",
    summary: "The dashboard's scripts and styles (content-hashed names, cached as immutable)",
    request: { params: z.object({ file: z.string() }) },
    responses: { 200: { description: "The file" }, ...refusals(404) },
  });
  registry.registerPath({
    method: "post",
    path: "/csp-report",
    summary: "Receive a Content-Security-Policy violation report (logged, never stored)",
    request: {
      body: {
        content: {
          "application/csp-report": { schema: z.looseObject({ "csp-report": z.looseObject({}) }) },
          "application/reports+json": { schema: z.array(z.looseObject({ type: z.string(), body: z.looseObject({}) })) },
        },
      },
    },
    responses: { 204: { description: "Received" }, ...refusals(400, 429) },
  });
  registry.registerPath({
    method: "get",
    path: OPENAPI_JSON_PATH,
    summary: "This description as JSON",
    responses: { 200: json("OpenAPI 3.1 document", z.looseObject({ openapi: z.string() })), ...refusals(429) },
  });
  registry.registerPath({
    method: "get",
    path: OPENAPI_YAML_PATH,
    summary: "This description as YAML",
    responses: { 200: { description: "OpenAPI 3.1 document", content: { "application/yaml": { schema: z.string() } } }, ...refusals(429) },
  });
}
