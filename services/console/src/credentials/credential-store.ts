import type { Queryable } from "@router/db";
import type { SealedSecret } from "@router/sealing";

/** Which credentials are tried first: every prioritized one before any fallback one. */
export type Tier = "prioritized" | "fallback";
/** What may serve when the organisation's own credentials cannot: the platform's, or nothing. */
export type FallbackPolicy = "platform" | "none_for_models" | "none_for_provider";

/** A credential as listed: everything but the key, which no route returns. */
export interface CredentialRecord {
  id: string;
  orgId: string;
  providerSlug: string;
  name: string | null;
  keyHint: string;
  tier: Tier;
  priority: number;
  fallbackPolicy: FallbackPolicy;
  modelFilter: Record<string, unknown>;
  /** A cloud credential's showable part (endpoint, region, project); empty for an API key. */
  settings: Record<string, unknown>;
  disabled: boolean;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export interface SealedCredential extends CredentialRecord {
  sealed: SealedSecret;
}

export interface NewCredential {
  id: string;
  orgId: string;
  providerSlug: string;
  name: string | null;
  keyHint: string;
  sealed: SealedSecret;
  tier: Tier;
  priority: number;
  fallbackPolicy: FallbackPolicy;
  modelFilter: Record<string, unknown>;
  settings: Record<string, unknown>;
  createdAt: Date;
}

interface CredentialRow {
  id: string;
  org_id: string;
  provider_slug: string;
  name: string | null;
  key_hint: string;
  tier: Tier;
  priority: number;
  fallback_policy: FallbackPolicy;
  model_filter: Record<string, unknown> | string;
  settings: Record<string, unknown> | string;
  disabled: boolean;
  created_at: Date;
  last_used_at: Date | null;
}

interface SealedRow extends CredentialRow {
  key_ciphertext: Uint8Array;
  key_iv: Uint8Array;
  key_tag: Uint8Array;
  dek_ciphertext: Uint8Array;
  dek_iv: Uint8Array;
  dek_tag: Uint8Array;
  kek_version: number;
}

const COLUMNS = `id, org_id, provider_slug, name, key_hint, tier, priority, fallback_policy, model_filter, settings,
  disabled, created_at, last_used_at`;
const SEALED_COLUMNS = `${COLUMNS}, key_ciphertext, key_iv, key_tag, dek_ciphertext, dek_iv, dek_tag, kek_version`;
// The dispatch order: prioritized before fallback, then priority ascending, then oldest first.
const DISPATCH_ORDER = `CASE tier WHEN 'prioritized' THEN 0 ELSE 1 END, priority, created_at, id`;

function fromRow(r: CredentialRow): CredentialRecord {
  return {
    id: r.id,
    orgId: r.org_id,
    providerSlug: r.provider_slug,
    name: r.name,
    keyHint: r.key_hint,
    tier: r.tier,
    priority: Number(r.priority),
    fallbackPolicy: r.fallback_policy,
    modelFilter: jsonObject(r.model_filter),
    settings: jsonObject(r.settings),
    disabled: r.disabled,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
  };
}

const jsonObject = (v: Record<string, unknown> | string): Record<string, unknown> =>
  typeof v === "string" ? (JSON.parse(v) as Record<string, unknown>) : v;

// pg returns bytea as Buffer, PGlite as Uint8Array.
const bytes = (v: Uint8Array): Buffer => (Buffer.isBuffer(v) ? v : Buffer.from(v));

function fromSealedRow(r: SealedRow): SealedCredential {
  return {
    ...fromRow(r),
    sealed: {
      ciphertext: bytes(r.key_ciphertext),
      iv: bytes(r.key_iv),
      tag: bytes(r.key_tag),
      wrappedKey: bytes(r.dek_ciphertext),
      wrappedKeyIv: bytes(r.dek_iv),
      wrappedKeyTag: bytes(r.dek_tag),
      kekVersion: Number(r.kek_version),
    },
  };
}

export async function insertCredential(q: Queryable, c: NewCredential): Promise<CredentialRecord> {
  const r = await q.query<CredentialRow>(
    `INSERT INTO provider_credentials (id, org_id, provider_slug, name, key_hint, key_ciphertext, key_iv, key_tag,
       dek_ciphertext, dek_iv, dek_tag, kek_version, tier, priority, fallback_policy, model_filter, created_at, settings)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16::jsonb, $17, $18::jsonb)
     RETURNING ${COLUMNS}`,
    [
      c.id,
      c.orgId,
      c.providerSlug,
      c.name,
      c.keyHint,
      c.sealed.ciphertext,
      c.sealed.iv,
      c.sealed.tag,
      c.sealed.wrappedKey,
      c.sealed.wrappedKeyIv,
      c.sealed.wrappedKeyTag,
      c.sealed.kekVersion,
      c.tier,
      c.priority,
      c.fallbackPolicy,
      JSON.stringify(c.modelFilter),
      c.createdAt,
      JSON.stringify(c.settings),
    ],
  );
  const row = r.rows[0];
  if (!row) throw new Error("insert returned no row");
  return fromRow(row);
}

export async function listCredentials(q: Queryable, orgId: string): Promise<CredentialRecord[]> {
  const r = await q.query<CredentialRow>(
    `SELECT ${COLUMNS} FROM provider_credentials WHERE org_id = $1 ORDER BY ${DISPATCH_ORDER}`,
    [orgId],
  );
  return r.rows.map(fromRow);
}

/** The organisation's enabled credentials with their sealed keys, in dispatch order. */
export async function enabledSealedCredentials(q: Queryable, orgId: string): Promise<SealedCredential[]> {
  const r = await q.query<SealedRow>(
    `SELECT ${SEALED_COLUMNS} FROM provider_credentials WHERE org_id = $1 AND NOT disabled ORDER BY ${DISPATCH_ORDER}`,
    [orgId],
  );
  return r.rows.map(fromSealedRow);
}

/** Sets `disabled`; returns false when the organisation has no such credential. */
export async function setCredentialDisabled(q: Queryable, orgId: string, id: string, disabled: boolean): Promise<boolean> {
  const r = await q.query(`UPDATE provider_credentials SET disabled = $3 WHERE id = $1 AND org_id = $2`, [
    id,
    orgId,
    disabled,
  ]);
  return r.rowCount > 0;
}

export async function deleteCredential(q: Queryable, orgId: string, id: string): Promise<boolean> {
  const r = await q.query(`DELETE FROM provider_credentials WHERE id = $1 AND org_id = $2`, [id, orgId]);
  return r.rowCount > 0;
}

/** Records the latest use of each credential in one statement; never moves `last_used_at` backwards. */
export async function recordCredentialUse(q: Queryable, uses: Map<string, Date>): Promise<void> {
  if (uses.size === 0) return;
  const ids = [...uses.keys()];
  const ats = ids.map((id) => (uses.get(id) as Date).toISOString());
  await q.query(
    `UPDATE provider_credentials p SET last_used_at = GREATEST(COALESCE(p.last_used_at, u.at), u.at)
     FROM (SELECT unnest($1::text[]) AS id, unnest($2::timestamptz[]) AS at) u
     WHERE p.id = u.id`,
    [ids, ats],
  );
}
