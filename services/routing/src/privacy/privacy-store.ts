import type { Queryable } from "@router/db";
import type { PrivacyPolicy } from "./privacy-policy";

interface PolicyRecord {
  org_id: string;
  zdr: boolean;
  zdr_groups: string[];
  deny_training: boolean;
  regions: string[];
}

const SELECT = "SELECT org_id, zdr, zdr_groups, deny_training, regions FROM privacy_policies";

/** Replaces the organisation's whole policy. */
export async function savePolicy(db: Queryable, orgId: string, p: PrivacyPolicy, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO privacy_policies (org_id, zdr, zdr_groups, deny_training, regions, updated_at)
     VALUES ($1, $2, $3::jsonb, $4, $5::jsonb, $6)
     ON CONFLICT (org_id) DO UPDATE SET zdr = EXCLUDED.zdr, zdr_groups = EXCLUDED.zdr_groups,
       deny_training = EXCLUDED.deny_training, regions = EXCLUDED.regions, updated_at = EXCLUDED.updated_at`,
    [orgId, p.zdr, JSON.stringify(p.zdrGroups), p.denyTraining, JSON.stringify(p.regions), now],
  );
}

/** Every stored policy, by organisation. */
export async function loadPolicies(db: Queryable): Promise<Map<string, PrivacyPolicy>> {
  const { rows } = await db.query<PolicyRecord>(SELECT);
  return new Map(rows.map((r) => [r.org_id, policyOf(r)]));
}

/** The organisation's stored policy; null when it never set one. */
export async function loadPolicy(db: Queryable, orgId: string): Promise<PrivacyPolicy | null> {
  const { rows } = await db.query<PolicyRecord>(`${SELECT} WHERE org_id = $1`, [orgId]);
  return rows[0] ? policyOf(rows[0]) : null;
}

function policyOf(r: PolicyRecord): PrivacyPolicy {
  return { zdr: r.zdr, zdrGroups: r.zdr_groups, denyTraining: r.deny_training, regions: r.regions };
}
