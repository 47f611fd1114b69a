import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { putBody as loggingPutBody } from "../logging-settings/logging-routes";
import { dataOf, json, jsonBody, refusals, SECURITY, timestamp } from "./envelopes";

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

/**
 * The organisation's content-logging settings. The organisation, its workspaces, members and
 * invitations are described with their routes (@router/management-api).
 */
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

  manage("get", "/v1/logging", "Content-logging settings", json("Settings", dataOf(logging)));
  manage("put", "/v1/logging", "Change content-logging settings", json("Settings", dataOf(logging)), { body: jsonBody(loggingPutBody) });
}
