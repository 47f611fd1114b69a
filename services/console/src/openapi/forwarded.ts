import type { OpenAPIRegistry, ResponseConfig } from "@asteasolutions/zod-to-openapi";
import { GATEWAY, MANAGEMENT_ROUTES, type Access, type ManagementRoute } from "@router/management-api";
import { z } from "zod";
import { json, jsonBody, refusals, SECURITY } from "./envelopes";

const REFUSALS_BY_ACCESS = {
  public: refusals(400, 404, 429),
  inference: refusals(400, 401, 403, 404, 429),
  management: refusals(400, 401, 403, 404, 429),
  any: refusals(400, 401, 403, 404, 429),
  processor: refusals(400, 429),
  probe: refusals(400, 401, 429),
};

const ACCESS_SECURITY: Record<Access, (typeof SECURITY)[keyof typeof SECURITY]> = {
  public: SECURITY.public,
  inference: SECURITY.inference,
  management: SECURITY.management,
  any: [...SECURITY.inference, ...SECURITY.management],
  processor: SECURITY.processor,
  probe: SECURITY.probe,
};

function paramsOf(path: string) {
  const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
  return names.length ? z.object(Object.fromEntries(names.map((n) => [n, z.string()]))) : undefined;
}

function answerOf(route: ManagementRoute): ResponseConfig {
  if (route.answer === "csv") return { description: route.summary, content: { "text/csv": { schema: z.string() } } };
  return json(route.summary, route.answer);
}

/**
 * Management routes, from their descriptions in @router/management-api: those the edge serves for
 * the services that own them (activity, routing, the ledger, reports, alerts, broadcast, runaway,
 * console) and those the gateway serves itself (keys, organisation, people, sessions), with the
 * same zod schemas the owners validate with.
 */
export function registerForwardedPaths(registry: OpenAPIRegistry): void {
  for (const route of MANAGEMENT_ROUTES) {
    const permission = route.permission ? ` Needs the \`${route.permission}\` permission (a management caller).` : "";
    registry.registerPath({
      method: route.method,
      path: route.openApiPath,
      summary: route.summary,
      description: `${route.owner === GATEWAY ? "Served by the gateway itself." : `Served by the ${route.owner} service.`}${permission}`,
      security: route.sessionOnly ? SECURITY.session : ACCESS_SECURITY[route.access],
      request: { params: paramsOf(route.openApiPath), query: route.query as z.ZodObject | undefined, body: route.body ? jsonBody(route.body) : undefined },
      responses: {
        [route.status ?? 200]: answerOf(route),
        ...REFUSALS_BY_ACCESS[route.access],
        ...refusals(...(route.refused ?? [])),
      },
    });
  }
}
