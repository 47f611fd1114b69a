import type { Queryable } from "@router/db";

/** An organisation's own branding fields; each null when unset. */
export interface BrandFields {
  brand_name: string | null;
  brand_logo: string | null;
  brand_footer: string | null;
}

const UNSET: BrandFields = { brand_name: null, brand_logo: null, brand_footer: null };

export async function readBranding(q: Queryable, orgId: string): Promise<BrandFields> {
  const { rows } = await q.query<BrandFields>("SELECT brand_name, brand_logo, brand_footer FROM branding WHERE org_id = $1", [orgId]);
  return rows[0] ?? UNSET;
}

/** Replaces the organisation's branding as a whole: a field given as null is cleared. */
export async function saveBranding(
  q: Queryable,
  orgId: string,
  fields: BrandFields,
  by: { userId: string | null; keyHash: string | null },
  now: Date,
): Promise<BrandFields> {
  const { rows } = await q.query<BrandFields>(
    `INSERT INTO branding (org_id, brand_name, brand_logo, brand_footer, updated_at, updated_by)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (org_id) DO UPDATE SET brand_name = EXCLUDED.brand_name, brand_logo = EXCLUDED.brand_logo,
       brand_footer = EXCLUDED.brand_footer, updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by
     RETURNING brand_name, brand_logo, brand_footer`,
    [orgId, fields.brand_name, fields.brand_logo, fields.brand_footer, now.toISOString(), by.userId ?? by.keyHash],
  );
  return rows[0] ?? UNSET;
}
