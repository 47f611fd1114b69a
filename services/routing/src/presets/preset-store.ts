import type { Db, Queryable } from "@router/db";
import { DomainError } from "@router/errors";
import type { PresetSettings } from "./preset-body";

/** A preset at its current version. */
export interface StoredPreset {
  slug: string;
  name: string;
  description: string | null;
  version: number;
  body: PresetSettings;
  createdAt: Date;
  updatedAt: Date;
}

export interface StoredVersion {
  version: number;
  body: PresetSettings;
  note: string | null;
  createdAt: Date;
}

interface PresetRecord {
  slug: string;
  name: string;
  description: string | null;
  version: number;
  body: unknown;
  created_at: Date | string;
  updated_at: Date | string;
}

interface VersionRecord {
  version: number;
  body: unknown;
  note: string | null;
  created_at: Date | string;
}

// Bodies were validated before they were stored; jsonb arrives parsed from pg and PGlite alike.
const settingsOf = (body: unknown): PresetSettings => (typeof body === "object" && body !== null ? body : {});

const CURRENT = `
  SELECT p.slug, p.name, p.description, p.current_version AS version, v.body, p.created_at, p.updated_at
    FROM presets p
    JOIN preset_versions v ON v.org_id = p.org_id AND v.slug = p.slug AND v.version = p.current_version`;

/** Every preset of the organisation at its current version, by slug. */
export async function listPresets(db: Queryable, orgId: string): Promise<StoredPreset[]> {
  const { rows } = await db.query<PresetRecord>(`${CURRENT} WHERE p.org_id = $1 ORDER BY p.slug`, [orgId]);
  return rows.map(presetOf);
}

/** The preset and its versions, newest first; null when the organisation has none by that slug. */
export async function findPreset(db: Queryable, orgId: string, slug: string): Promise<{ preset: StoredPreset; versions: StoredVersion[] } | null> {
  const { rows } = await db.query<PresetRecord>(`${CURRENT} WHERE p.org_id = $1 AND p.slug = $2`, [orgId, slug]);
  const first = rows[0];
  if (!first) return null;
  return { preset: presetOf(first), versions: await versionsOf(db, orgId, slug) };
}

export async function versionsOf(db: Queryable, orgId: string, slug: string): Promise<StoredVersion[]> {
  const { rows } = await db.query<VersionRecord>(
    `SELECT version, body, note, created_at FROM preset_versions WHERE org_id = $1 AND slug = $2 ORDER BY version DESC`,
    [orgId, slug],
  );
  return rows.map((r) => ({ version: Number(r.version), body: settingsOf(r.body), note: r.note, createdAt: new Date(r.created_at) }));
}

/** Creates the preset at version 1; 409 when the organisation already has that slug. */
export async function createPreset(
  db: Db,
  orgId: string,
  p: { slug: string; name: string; description: string | null; body: PresetSettings },
  now: Date,
): Promise<StoredPreset> {
  return db.tx(async (q) => {
    const created = await q.query(
      `INSERT INTO presets (org_id, slug, name, description, current_version, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 1, $5, $5) ON CONFLICT (org_id, slug) DO NOTHING`,
      [orgId, p.slug, p.name, p.description, now],
    );
    if (created.rowCount === 0) {
      throw new DomainError("conflict", `slug: a preset named ${p.slug} already exists; save a new version instead`, {
        details: { field: "slug" },
      });
    }
    await insertVersion(q, orgId, p.slug, 1, p.body, null, now);
    return { slug: p.slug, name: p.name, description: p.description, version: 1, body: p.body, createdAt: now, updatedAt: now };
  });
}

/**
 * Adds a version holding `body` and makes it current; `name` and `description` change when given
 * (undefined keeps them). The preset's row lock orders concurrent versions. Null when there is no
 * such preset.
 */
export async function addVersion(
  db: Db,
  orgId: string,
  slug: string,
  v: { body: PresetSettings; note: string | null; name?: string; description?: string | null },
  now: Date,
): Promise<StoredPreset | null> {
  return db.tx(async (q) => {
    const { rows } = await q.query<PresetRecord>(
      `UPDATE presets SET current_version = current_version + 1,
              name = COALESCE($3::text, name),
              description = CASE WHEN $4::boolean THEN $5::text ELSE description END,
              updated_at = $6
        WHERE org_id = $1 AND slug = $2
        RETURNING slug, name, description, current_version AS version, NULL::jsonb AS body, created_at, updated_at`,
      [orgId, slug, v.name ?? null, v.description !== undefined, v.description ?? null, now],
    );
    const row = rows[0];
    if (!row) return null;
    await insertVersion(q, orgId, slug, Number(row.version), v.body, v.note, now);
    return { ...presetOf(row), body: v.body };
  });
}

/** One version's body; null when the preset or the version does not exist. */
export async function versionBody(db: Queryable, orgId: string, slug: string, version: number): Promise<PresetSettings | null> {
  const { rows } = await db.query<{ body: unknown }>(
    `SELECT body FROM preset_versions WHERE org_id = $1 AND slug = $2 AND version = $3`,
    [orgId, slug, version],
  );
  return rows[0] ? settingsOf(rows[0].body) : null;
}

/** Removes the preset and its history; false when there was none. */
export async function deletePreset(db: Queryable, orgId: string, slug: string): Promise<boolean> {
  const { rowCount } = await db.query(`DELETE FROM presets WHERE org_id = $1 AND slug = $2`, [orgId, slug]);
  return rowCount > 0;
}

/** What Plan needs of one preset: its current version number and every version's settings. */
export interface PresetVersions {
  current: number;
  versions: ReadonlyMap<number, PresetSettings>;
}

export async function loadPresetVersions(db: Queryable, orgId: string, slug: string): Promise<PresetVersions | null> {
  const { rows } = await db.query<{ current: number; version: number; body: unknown }>(
    `SELECT p.current_version AS current, v.version, v.body
       FROM presets p JOIN preset_versions v ON v.org_id = p.org_id AND v.slug = p.slug
      WHERE p.org_id = $1 AND p.slug = $2`,
    [orgId, slug],
  );
  const first = rows[0];
  if (!first) return null;
  return { current: Number(first.current), versions: new Map(rows.map((r) => [Number(r.version), settingsOf(r.body)])) };
}

function insertVersion(q: Queryable, orgId: string, slug: string, version: number, body: PresetSettings, note: string | null, now: Date) {
  return q.query(
    `INSERT INTO preset_versions (org_id, slug, version, body, note, created_at) VALUES ($1, $2, $3, $4::jsonb, $5, $6)`,
    [orgId, slug, version, JSON.stringify(body), note, now],
  );
}

function presetOf(r: PresetRecord): StoredPreset {
  return {
    slug: r.slug,
    name: r.name,
    description: r.description,
    version: Number(r.version),
    body: settingsOf(r.body),
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
  };
}
