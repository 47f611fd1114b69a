import type { Db, Queryable } from "@router/db";
import type { StoredSeal } from "./destination-secrets";

export type DestinationKind = "webhook" | "otlp";

/** A destination as stored, secrets still sealed. */
export interface DestinationRow {
  id: string;
  org_id: string;
  kind: DestinationKind;
  url: string;
  name: string | null;
  sample_rate: number;
  disabled: boolean;
  header_name: string | null;
  header_hint: string | null;
  header_value_sealed: StoredSeal | null;
  signing_secret_sealed: StoredSeal | null;
  last_attempt_at: Date | null;
  last_success_at: Date | null;
  last_http_status: number | null;
  last_error: string | null;
  created_at: Date;
}

/** At most this many destinations per organisation (Limits, in the service README). */
export const MAX_DESTINATIONS = 10;

const COLUMNS = `id, org_id, kind, url, name, sample_rate, disabled, header_name, header_hint, header_value_sealed,
  signing_secret_sealed, last_attempt_at, last_success_at, last_http_status, last_error, created_at`;

// Postgres (pg) and PGlite differ in what they hand back for numbers, jsonb and timestamps.
function normalise(r: DestinationRow): DestinationRow {
  return {
    ...r,
    sample_rate: Number(r.sample_rate),
    header_value_sealed: parseSeal(r.header_value_sealed),
    signing_secret_sealed: parseSeal(r.signing_secret_sealed),
    last_attempt_at: toDate(r.last_attempt_at),
    last_success_at: toDate(r.last_success_at),
    created_at: toDate(r.created_at) ?? new Date(0),
  };
}

function parseSeal(v: unknown): StoredSeal | null {
  if (v === null || v === undefined) return null;
  return (typeof v === "string" ? JSON.parse(v) : v) as StoredSeal;
}

function toDate(v: Date | string | null): Date | null {
  if (v === null) return null;
  return v instanceof Date ? v : new Date(v);
}

export interface NewDestination {
  id: string;
  orgId: string;
  kind: DestinationKind;
  url: string;
  name: string | null;
  sampleRate: number;
  headerName: string | null;
  headerHint: string | null;
  headerValueSealed: StoredSeal | null;
  signingSecretSealed: StoredSeal | null;
  createdAt: Date;
}

/**
 * Inserts a destination unless the organisation already holds `MAX_DESTINATIONS`; null then. The
 * count and the insert run under a per-organisation advisory lock, so concurrent creates cannot
 * both pass the limit.
 */
export async function insertDestination(db: Db, d: NewDestination): Promise<DestinationRow | null> {
  return db.tx(async (q) => {
    await q.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`broadcast-destinations:${d.orgId}`]);
    const { rows: counted } = await q.query<{ n: string | number }>("SELECT count(*) AS n FROM destinations WHERE org_id = $1", [d.orgId]);
    if (Number(counted[0]?.n ?? 0) >= MAX_DESTINATIONS) return null;
    const { rows } = await q.query<DestinationRow>(
      `INSERT INTO destinations (id, org_id, kind, url, name, sample_rate, header_name, header_hint, header_value_sealed,
         signing_secret_sealed, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       RETURNING ${COLUMNS}`,
      [
        d.id,
        d.orgId,
        d.kind,
        d.url,
        d.name,
        d.sampleRate,
        d.headerName,
        d.headerHint,
        d.headerValueSealed === null ? null : JSON.stringify(d.headerValueSealed),
        d.signingSecretSealed === null ? null : JSON.stringify(d.signingSecretSealed),
        d.createdAt,
      ],
    );
    return rows[0] ? normalise(rows[0]) : null;
  });
}

/** The organisation's destinations, oldest first. */
export async function listDestinations(db: Queryable, orgId: string): Promise<DestinationRow[]> {
  const { rows } = await db.query<DestinationRow>(
    `SELECT ${COLUMNS} FROM destinations WHERE org_id = $1 ORDER BY created_at, id`,
    [orgId],
  );
  return rows.map(normalise);
}

export async function findDestination(db: Queryable, orgId: string, id: string): Promise<DestinationRow | null> {
  const { rows } = await db.query<DestinationRow>(`SELECT ${COLUMNS} FROM destinations WHERE org_id = $1 AND id = $2`, [orgId, id]);
  return rows[0] ? normalise(rows[0]) : null;
}

/** The enabled destinations of any of these organisations, for fanning out a batch of events. */
export async function activeDestinationsOf(db: Queryable, orgIds: readonly string[]): Promise<DestinationRow[]> {
  if (orgIds.length === 0) return [];
  const { rows } = await db.query<DestinationRow>(
    `SELECT ${COLUMNS} FROM destinations WHERE org_id = ANY($1::text[]) AND NOT disabled ORDER BY created_at, id`,
    [orgIds],
  );
  return rows.map(normalise);
}

export interface DestinationChanges {
  disabled?: boolean;
  sampleRate?: number;
  /** null clears the name. */
  name?: string | null;
}

/** Applies the given changes; null when the organisation has no such destination. */
export async function updateDestination(db: Queryable, orgId: string, id: string, c: DestinationChanges): Promise<DestinationRow | null> {
  const { rows } = await db.query<DestinationRow>(
    `UPDATE destinations SET
       disabled = CASE WHEN $3::boolean IS NULL THEN disabled ELSE $3::boolean END,
       sample_rate = CASE WHEN $4::double precision IS NULL THEN sample_rate ELSE $4::double precision END,
       name = CASE WHEN $5::boolean THEN $6::text ELSE name END
     WHERE org_id = $1 AND id = $2
     RETURNING ${COLUMNS}`,
    [orgId, id, c.disabled ?? null, c.sampleRate ?? null, c.name !== undefined, c.name ?? null],
  );
  return rows[0] ? normalise(rows[0]) : null;
}

export async function deleteDestination(db: Queryable, orgId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM destinations WHERE org_id = $1 AND id = $2", [orgId, id]);
  return rowCount > 0;
}

/** How one delivery to a destination ended, as the destination row keeps it. */
export interface AttemptRecord {
  /** When the delivery began; an older attempt finishing late never overwrites a newer one. */
  attemptedAt: Date;
  succeeded: boolean;
  httpStatus: number | null;
  error: string | null;
}

/**
 * Records one delivery on the destination: `last_attempt_at`, `last_http_status` and `last_error`
 * describe the newest attempt (a success clears the error; an older attempt finishing late never
 * overwrites a newer one), `last_success_at` the newest success. A destination removed meanwhile is
 * simply not found.
 */
export async function recordAttempt(db: Queryable, id: string, a: AttemptRecord): Promise<void> {
  await db.query(
    `UPDATE destinations SET
       last_attempt_at = CASE WHEN newest THEN $2 ELSE last_attempt_at END,
       last_http_status = CASE WHEN newest THEN $3 ELSE last_http_status END,
       last_error = CASE WHEN newest THEN $4 ELSE last_error END,
       last_success_at = CASE WHEN $5::boolean THEN greatest(last_success_at, $2) ELSE last_success_at END
     FROM (SELECT last_attempt_at IS NULL OR last_attempt_at <= $2 AS newest FROM destinations WHERE id = $1) AS o
     WHERE destinations.id = $1`,
    [id, a.attemptedAt, a.httpStatus, a.succeeded ? null : a.error, a.succeeded],
  );
}
