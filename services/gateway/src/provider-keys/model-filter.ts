import { z } from "zod";

const modelPattern = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9._:/~@-]+\*?$/, "expected a model id such as openai/gpt-4o, or a prefix ending in *");

/**
 * `model_filter` of a provider credential: `allow` (when present and non-empty, only these
 * models) and `deny` (never these; deny wins). Entries are catalog model ids (`author/slug`), or
 * a prefix ending in `*` (`openai/gpt-4o*`).
 */
export const modelFilterSchema = z
  .object({
    allow: z.array(modelPattern).max(500).optional(),
    deny: z.array(modelPattern).max(500).optional(),
  })
  .strict();

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
