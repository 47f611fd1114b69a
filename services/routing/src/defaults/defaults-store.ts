import type { Queryable } from "@router/db";
import { DEFAULT_SORTS, NEVER_SET, type DefaultSort, type RoutingDefaults } from "./routing-defaults";

interface DefaultsRecord {
  default_model: string | null;
  fallback_models: unknown;
  default_sort: string | null;
  lock_sort: boolean;
  updated_at: Date | string;
}

/** The organisation's defaults, or `NEVER_SET` when it has no row. */
export async function loadDefaults(db: Queryable, orgId: string): Promise<RoutingDefaults> {
  const { rows } = await db.query<DefaultsRecord>(
    `SELECT default_model, fallback_models, default_sort, lock_sort, updated_at
       FROM routing_defaults WHERE org_id = $1`,
    [orgId],
  );
  const r = rows[0];
  return r ? fromRecord(r) : NEVER_SET;
}

/** Replaces the organisation's whole set and returns it as stored. */
export async function saveDefaults(db: Queryable, orgId: string, d: RoutingDefaults): Promise<RoutingDefaults> {
  const { rows } = await db.query<DefaultsRecord>(
    `INSERT INTO routing_defaults (org_id, default_model, fallback_models, default_sort, lock_sort, updated_at)
     VALUES ($1, $2, $3::jsonb, $4, $5, $6)
     ON CONFLICT (org_id) DO UPDATE SET
       default_model   = EXCLUDED.default_model,
       fallback_models = EXCLUDED.fallback_models,
       default_sort    = EXCLUDED.default_sort,
       lock_sort       = EXCLUDED.lock_sort,
       updated_at      = EXCLUDED.updated_at
     RETURNING default_model, fallback_models, default_sort, lock_sort, updated_at`,
    [orgId, d.defaultModel, JSON.stringify(d.fallbackModels), d.defaultSort, d.lockSort, d.updatedAt ?? new Date()],
  );
  const r = rows[0];
  if (!r) throw new Error("routing_defaults upsert returned no row");
  return fromRecord(r);
}

function fromRecord(r: DefaultsRecord): RoutingDefaults {
  // jsonb arrives parsed from pg and from PGlite alike; anything else is ignored rather than trusted.
  const fallbackModels = Array.isArray(r.fallback_models)
    ? r.fallback_models.filter((m): m is string => typeof m === "string")
    : [];
  return {
    defaultModel: r.default_model,
    fallbackModels,
    defaultSort: (DEFAULT_SORTS as readonly string[]).includes(r.default_sort ?? "") ? (r.default_sort as DefaultSort) : null,
    lockSort: r.lock_sort,
    updatedAt: new Date(r.updated_at),
  };
}
