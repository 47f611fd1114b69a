import { fromUsd, type Nanodollars } from "@router/money";
import { z } from "zod";
import { invalid } from "@router/errors";
import { parseInput } from "@router/http-kit";
import { BUILTIN_DETECTORS, patternProblem } from "@router/content-filter";
import type { CatalogSnapshot } from "../catalog/catalog-snapshot";


const MODEL_AUTHOR = /^[a-z0-9][a-z0-9._-]*$/;
const list = (item: z.ZodType<string>) => z.array(item).max(100).default([]);
const ContentFilter = z.strictObject({
  name: z.string().trim().min(1).max(80).optional(),
  pattern: z
    .string()
    .min(1)
    .max(500)
    .superRefine((pattern, ctx) => {
      const problem = patternProblem(pattern);
      if (problem !== null) ctx.addIssue({ code: "custom", message: problem });
    }),
  action: z.enum(["block", "redact", "flag"]),
});

export const GuardrailBody = z.strictObject({
  name: z.string().trim().min(1, "must not be empty").max(80),
  limit_usd: z.number().min(0).max(1_000_000_000).optional(),
  reset_interval: z.enum(["daily", "weekly", "monthly", "lifetime"]).optional(),
  allowed_models: list(z.string().min(1).max(200)),
  allowed_providers: list(z.string().min(1).max(64)),
  allowed_data_regions: list(z.string().trim().min(1).max(64).transform((r) => r.toLowerCase())),
  include_byok_in_budgets: z.boolean().default(false),
  // Model authors (the privacy policy's groups) whose models must route to ZDR endpoints.
  enforce_zdr: z.record(z.string().regex(MODEL_AUTHOR, "a model author such as openai"), z.boolean()).default({}),
  content_filter_builtins: z.array(z.enum(BUILTIN_DETECTORS)).max(BUILTIN_DETECTORS.length).default([]),
  content_filters: z.array(ContentFilter).max(50).default([]),
  filter_allowlist: list(z.string().min(1).max(200)),
});

export type ContentFilterRule = z.infer<typeof ContentFilter>;

/** A guardrail as written: validated, regions lower-cased, the budget in nanodollars. */
export interface GuardrailSettings {
  name: string;
  allowedModels: string[];
  allowedProviders: string[];
  allowedDataRegions: string[];
  enforceZdr: Record<string, boolean>;
  budgetNanodollars: Nanodollars | null;
  budgetReset: string | null;
  includeByokInBudgets: boolean;
  contentFilterBuiltins: string[];
  contentFilters: ContentFilterRule[];
  filterAllowlist: string[];
}

/**
 * Validates a create body. Every region must be one some endpoint of the catalog declares (an
 * allowlist naming none would refuse everything, silently); a reset interval needs a limit.
 */
export function readGuardrailBody(body: unknown, catalog: CatalogSnapshot): GuardrailSettings {
  const input = parseInput(GuardrailBody, body ?? {});
  const declared = catalog.declaredRegions();
  input.allowed_data_regions.forEach((region, i) => {
    if (!declared.has(region)) throw invalid(`allowed_data_regions.${i}`, `no endpoint declares the region ${region}`);
  });
  if (input.reset_interval !== undefined && input.limit_usd === undefined) throw invalid("reset_interval", "needs limit_usd");
  return {
    name: input.name,
    allowedModels: [...new Set(input.allowed_models)],
    allowedProviders: [...new Set(input.allowed_providers)],
    allowedDataRegions: [...new Set(input.allowed_data_regions)],
    enforceZdr: input.enforce_zdr,
    budgetNanodollars: input.limit_usd === undefined ? null : fromUsd(input.limit_usd),
    budgetReset: input.limit_usd === undefined ? null : (input.reset_interval ?? "lifetime"),
    includeByokInBudgets: input.include_byok_in_budgets,
    contentFilterBuiltins: [...new Set(input.content_filter_builtins)],
    contentFilters: input.content_filters,
    filterAllowlist: input.filter_allowlist,
  };
}

export const AssignmentBody = z.strictObject({
  subject_type: z.enum(["key", "member"]),
  subject_id: z.string().trim().min(1).max(200),
});
