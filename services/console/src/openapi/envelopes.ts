import type { ResponseConfig, RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";

/** The error envelope every refusal uses (`{"error": {...}}`). */
export const errorEnvelope = z
  .object({
    error: z.object({
      status: z.number().int(),
      code: z.string().meta({ description: "stable snake_case code, e.g. invalid_request, not_found, rate_limited" }),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .meta({ id: "Error" });

/** Every timestamp of the API. */
export const timestamp = z.string().meta({ description: "ISO 8601 UTC with milliseconds" });

/** `{"data": T}`, the body of every `/v1` JSON answer. */
export const dataOf = <T extends z.ZodType>(schema: T) => z.object({ data: schema });

/** `{"data": [T], "next_cursor": string | null}`, a page of a list. */
export const pageOf = <T extends z.ZodType>(schema: T) => z.object({ data: z.array(schema), next_cursor: z.string().nullable() });

export function json(description: string, schema: z.ZodType): ResponseConfig {
  return { description, content: { "application/json": { schema } } };
}

export function jsonBody(schema: z.ZodType): NonNullable<RouteConfig["request"]>["body"] {
  return { required: true, content: { "application/json": { schema } } };
}

const REFUSALS: Record<number, string> = {
  400: "Bad input; `details` names the field",
  401: "No or an unknown credential",
  402: "The credit balance cannot cover the request's fee (`insufficient_credits`); buy credits",
  403: "The credential may not do this",
  404: "Not found (another organisation's ids too)",
  409: "Conflicts with the current state",
  429: "Rate limited; see `Retry-After`",
};

/** The usual refusals of a route, each with the error envelope. */
export function refusals(...statuses: (keyof typeof REFUSALS)[]): Record<number, ResponseConfig> {
  return Object.fromEntries(statuses.map((s) => [s, json(REFUSALS[s] ?? "Refused", errorEnvelope)]));
}

type SecurityRequirements = Record<string, string[]>[];

/** Security requirements, by the credential classes of the API (schemes in security.ts). */
export const SECURITY: Record<"inference" | "management" | "session" | "public" | "processor" | "probe", SecurityRequirements> = {
  inference: [{ inferenceKey: [] }],
  management: [{ managementKey: [] }, { session: [] }],
  session: [{ session: [] }],
  public: [],
  processor: [{ processorSignature: [] }],
  probe: [{ probeToken: [] }],
};

/** A path parameter object, every one a string. */
export const pathParams = <K extends string>(...names: K[]) =>
  z.object(Object.fromEntries(names.map((n) => [n, z.string()])) as Record<K, z.ZodString>);
