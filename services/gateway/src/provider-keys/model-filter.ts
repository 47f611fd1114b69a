import { providerKeys } from "@router/management-api";
import type { z } from "zod";

/**
 * `model_filter` of a provider credential: `allow` (when present and non-empty, only these
 * models) and `deny` (never these; deny wins), as the credential routes' description holds it.
 */
export const modelFilterSchema = providerKeys.modelFilterSchema;

export type ModelFilter = z.infer<typeof modelFilterSchema>;

function matches(pattern: string, modelId: string): boolean {
  return pattern.endsWith("*") ? modelId.startsWith(pattern.slice(0, -1)) : pattern === modelId;
}

function patterns(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/** Whether a credential with this filter may serve `modelId`. Tolerates stored filters of any shape. */
export function filterAllows(filter: Record<string, unknown>, modelId: string): boolean {
  if (patterns(filter.deny).some((p) => matches(p, modelId))) return false;
  const allow = patterns(filter.allow);
  return allow.length === 0 || allow.some((p) => matches(p, modelId));
}
