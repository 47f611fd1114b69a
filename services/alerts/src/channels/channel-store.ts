import type { Db, Queryable } from "@router/db";

export type ChannelKind = "webhook" | "chat" | "email";

export interface ChannelRecord {
  id: string;
  orgId: string;
  kind: ChannelKind;
  target: string;
  name: string | null;
  thresholds: number[];
  disabled: boolean;
  /** The webhook signing secret, sealed (`packSealed`); null for chat and email. */
  signingSecretSealed: string | null;
  createdAt: Date;
}

interface ChannelRow {
  id: string;
  org_id: string;
  kind: ChannelKind;
  target: string;
  name: string | null;
  thresholds: number[];
  disabled: boolean;
  signing_secret_sealed: string | null;
  created_at: Date;
}

const COLUMNS = "id, org_id, kind, target, name, thresholds, disabled, signing_secret_sealed, created_at";

function fromRow(r: ChannelRow): ChannelRecord {
  return {
    id: r.id,
    orgId: r.org_id,
    kind: r.kind,
    target: r.target,
    name: r.name,
    thresholds: r.thresholds.map(Number),
    disabled: r.disabled,
    signingSecretSealed: r.signing_secret_sealed,
    createdAt: new Date(r.created_at),
  };
}

/**
 * Inserts a channel unless the organisation already has `limit`; null when it has. The count and
 * the insert run under a per-organisation transaction lock, so concurrent creations cannot pass
 * the limit together.
 */
export async function insertChannelWithin(db: Db, channel: ChannelRecord, limit: number): Promise<ChannelRecord | null> {
  return db.tx(async (q) => {
    await q.query("SELECT pg_advisory_xact_lock(hashtext('alerts.channels:' || $1))", [channel.orgId]);
    const count = await q.query<{ n: number }>("SELECT count(*)::int AS n FROM channels WHERE org_id = $1", [channel.orgId]);
    if ((count.rows[0]?.n ?? 0) >= limit) return null;
    const r = await q.query<ChannelRow>(
      `INSERT INTO channels (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${COLUMNS}`,
      [
        channel.id,
        channel.orgId,
        channel.kind,
        channel.target,
        channel.name,
        channel.thresholds,
        channel.disabled,
        channel.signingSecretSealed,
        channel.createdAt,
      ],
    );
    return fromRow(r.rows[0] as ChannelRow);
  });
}

/** The organisation's channels, oldest first. */
export async function listChannels(db: Queryable, orgId: string): Promise<ChannelRecord[]> {
  const r = await db.query<ChannelRow>(`SELECT ${COLUMNS} FROM channels WHERE org_id = $1 ORDER BY created_at, id`, [orgId]);
  return r.rows.map(fromRow);
}

export async function findChannel(db: Queryable, orgId: string, id: string): Promise<ChannelRecord | null> {
  const r = await db.query<ChannelRow>(`SELECT ${COLUMNS} FROM channels WHERE org_id = $1 AND id = $2`, [orgId, id]);
  return r.rows[0] ? fromRow(r.rows[0]) : null;
}

/** Removes a channel; its deliveries stay, with `channel_id` set to null. False when there was none. */
export async function deleteChannel(db: Queryable, orgId: string, id: string): Promise<boolean> {
  const r = await db.query("DELETE FROM channels WHERE org_id = $1 AND id = $2", [orgId, id]);
  return r.rowCount > 0;
}
