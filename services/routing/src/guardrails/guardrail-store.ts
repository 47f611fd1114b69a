import { randomBytes } from "node:crypto";
import type { Db, Queryable } from "@router/db";
import type { ContentFilterRule, GuardrailSettings } from "./guardrail-body";

export type SubjectType = "key" | "member";

export interface Assignment {
  subjectType: SubjectType;
  subjectId: string;
}

export interface StoredGuardrail extends GuardrailSettings {
  id: string;
  createdAt: Date;
  assignments: Assignment[];
}

interface GuardrailRecord {
  id: string;
  name: string;
  allowed_models: string[];
  allowed_providers: string[];
  allowed_data_regions: string[];
  enforce_zdr: Record<string, boolean>;
  budget_nanodollars: string | number | null;
  budget_reset: string | null;
  include_byok_in_budgets: boolean;
  content_filter_builtins: string[];
  content_filters: ContentFilterRule[];
  filter_allowlist: string[];
  created_at: Date | string;
}

const json = (v: unknown) => JSON.stringify(v);

export async function createGuardrail(db: Queryable, orgId: string, g: GuardrailSettings, now: Date): Promise<StoredGuardrail> {
  const id = `gr_${randomBytes(12).toString("hex")}`;
  await db.query(
    `INSERT INTO guardrails (id, org_id, name, allowed_models, allowed_providers, allowed_data_regions, enforce_zdr,
                             budget_nanodollars, budget_reset, include_byok_in_budgets, content_filter_builtins,
                             content_filters, filter_allowlist, created_at)
     VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6::jsonb, $7::jsonb, $8, $9, $10, $11::jsonb, $12::jsonb, $13::jsonb, $14)`,
    [
      id,
      orgId,
      g.name,
      json(g.allowedModels),
      json(g.allowedProviders),
      json(g.allowedDataRegions),
      json(g.enforceZdr),
      g.budgetNanodollars === null ? null : g.budgetNanodollars.toString(),
      g.budgetReset,
      g.includeByokInBudgets,
      json(g.contentFilterBuiltins),
      json(g.contentFilters),
      json(g.filterAllowlist),
      now,
    ],
  );
  return { ...g, id, createdAt: now, assignments: [] };
}

/** Every guardrail of the organisation with its assignments, oldest first. */
export async function listGuardrails(db: Db, orgId: string): Promise<StoredGuardrail[]> {
  const [guardrails, assignments] = await Promise.all([
    db.query<GuardrailRecord>("SELECT * FROM guardrails WHERE org_id = $1 ORDER BY created_at, id", [orgId]),
    db.query<{ guardrail_id: string; subject_type: SubjectType; subject_id: string }>(
      "SELECT guardrail_id, subject_type, subject_id FROM guardrail_assignments WHERE org_id = $1 ORDER BY created_at, subject_id",
      [orgId],
    ),
  ]);
  const byGuardrail = new Map<string, Assignment[]>();
  for (const a of assignments.rows) {
    const held = byGuardrail.get(a.guardrail_id) ?? [];
    held.push({ subjectType: a.subject_type, subjectId: a.subject_id });
    byGuardrail.set(a.guardrail_id, held);
  }
  return guardrails.rows.map((r) => ({ ...settingsOf(r), id: r.id, createdAt: new Date(r.created_at), assignments: byGuardrail.get(r.id) ?? [] }));
}

/** True when the organisation had the guardrail (its assignments go with it). */
export async function deleteGuardrail(db: Queryable, orgId: string, id: string): Promise<boolean> {
  return (await db.query("DELETE FROM guardrails WHERE org_id = $1 AND id = $2", [orgId, id])).rowCount > 0;
}

/** Assigns the organisation's guardrail (assigning twice changes nothing); false when it has none by that id. */
export async function assignGuardrail(db: Queryable, orgId: string, id: string, a: Assignment, now: Date): Promise<boolean> {
  const r = await db.query(
    `INSERT INTO guardrail_assignments (guardrail_id, org_id, subject_type, subject_id, created_at)
     SELECT id, org_id, $3, $4, $5 FROM guardrails WHERE org_id = $1 AND id = $2
     ON CONFLICT DO NOTHING`,
    [orgId, id, a.subjectType, a.subjectId, now],
  );
  if (r.rowCount > 0) return true;
  return (await db.query("SELECT 1 FROM guardrails WHERE org_id = $1 AND id = $2", [orgId, id])).rowCount > 0;
}

function settingsOf(r: GuardrailRecord): GuardrailSettings {
  return {
    name: r.name,
    allowedModels: r.allowed_models,
    allowedProviders: r.allowed_providers,
    allowedDataRegions: r.allowed_data_regions,
    enforceZdr: r.enforce_zdr,
    budgetNanodollars: r.budget_nanodollars === null ? null : BigInt(r.budget_nanodollars),
    budgetReset: r.budget_reset,
    includeByokInBudgets: r.include_byok_in_budgets,
    contentFilterBuiltins: r.content_filter_builtins,
    contentFilters: r.content_filters,
    filterAllowlist: r.filter_allowlist,
  };
}
