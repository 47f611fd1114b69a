import type { Queryable } from "@router/db";

export type LoggingPurpose = "self_access" | "rag";

/** An organisation's input/output logging settings (in the service README). */
export interface LoggingSettings {
  enabled: boolean;
  keyInclude: string[];
  keyExclude: string[];
  retentionDays: number;
  locked: boolean;
  purposes: LoggingPurpose[];
  consentedAt: Date | null;
}

/** What an organisation that never configured logging has: off, 90 days, consent to `self_access` only. */
export const DEFAULT_LOGGING: LoggingSettings = {
  enabled: false,
  keyInclude: [],
  keyExclude: [],
  retentionDays: 90,
  locked: false,
  purposes: ["self_access"],
  consentedAt: null,
};

interface LoggingRow {
  enabled: boolean;
  key_include: string[];
  key_exclude: string[];
  retention_days: number;
  locked: boolean;
  purposes: LoggingPurpose[];
  consented_at: Date | null;
}

export async function loadLogging(q: Queryable, orgId: string, opts: { forUpdate?: boolean } = {}): Promise<LoggingSettings> {
  const r = await q.query<LoggingRow>(
    `SELECT enabled, key_include, key_exclude, retention_days, locked, purposes, consented_at
     FROM logging_settings WHERE org_id = $1 ${opts.forUpdate ? "FOR UPDATE" : ""}`,
    [orgId],
  );
  const row = r.rows[0];
  if (!row) return DEFAULT_LOGGING;
  return {
    enabled: row.enabled,
    keyInclude: row.key_include,
    keyExclude: row.key_exclude,
    retentionDays: row.retention_days,
    locked: row.locked,
    purposes: row.purposes,
    consentedAt: row.consented_at,
  };
}

export async function saveLogging(q: Queryable, orgId: string, s: LoggingSettings, now: Date): Promise<void> {
  await q.query(
    `INSERT INTO logging_settings (org_id, enabled, key_include, key_exclude, retention_days, locked, purposes, consented_at, updated_at)
     VALUES ($1, $2, $3::jsonb, $4::jsonb, $5, $6, $7::jsonb, $8, $9)
     ON CONFLICT (org_id) DO UPDATE SET enabled = EXCLUDED.enabled, key_include = EXCLUDED.key_include,
       key_exclude = EXCLUDED.key_exclude, retention_days = EXCLUDED.retention_days, locked = EXCLUDED.locked,
       purposes = EXCLUDED.purposes, consented_at = EXCLUDED.consented_at, updated_at = EXCLUDED.updated_at`,
    [
      orgId,
      s.enabled,
      JSON.stringify(s.keyInclude),
      JSON.stringify(s.keyExclude),
      s.retentionDays,
      s.locked,
      JSON.stringify(s.purposes),
      s.consentedAt,
      now,
    ],
  );
}
