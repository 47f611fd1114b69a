import type { Request } from "express";
import { invalid } from "@router/errors";

/**
 * The request body as a JSON object, refusing other JSON values and any field outside `allowed`
 * with a 400 that names the field. `fixed` names fields that exist on the resource but cannot be
 * set here, with the reason. A missing body counts as `{}`.
 */
export function objectBody(
  req: Request,
  allowed: readonly string[],
  fixed: Record<string, string> = {},
): Record<string, unknown> {
  const body: unknown = req.body ?? {};
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalid("body", "expected a JSON object");
  }
  for (const field of Object.keys(body)) {
    const reason = fixed[field];
    if (reason !== undefined) throw invalid(field, reason);
    if (!allowed.includes(field)) throw invalid(field, "unknown field");
  }
  return body as Record<string, unknown>;
}
