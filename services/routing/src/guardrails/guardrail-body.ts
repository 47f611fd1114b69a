import { fromUsd, type Nanodollars } from "@router/money";
import type { z } from "zod";
import { invalid } from "@router/errors";
import { parseInput } from "@router/http-kit";
import { routing } from "@router/management-api";
import type { CatalogSnapshot } from "../catalog/catalog-snapshot";

/** The create body: the schema the API description gives (@router/management-api). */
export const GuardrailBody = routing.guardrailBody;

export type ContentFilterRule = z.infer<typeof routing.contentFilterRule>;

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

export const AssignmentBody = routing.assignmentBody;
