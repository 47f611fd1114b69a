import type { Queryable } from "@router/db";
import type { DeliveryStatus } from "@router/outbound";

/** How long delivery records are kept (Limits, in the service README). */
export const DELIVERY_RETENTION_DAYS = 90;
/** How many the list returns. */
export const DELIVERY_LIST_LIMIT = 50;

export interface DeliveryRecord {
  id: string;
  orgId: string;
  channelId: string | null;
  channelName: string | null;
  channelKind: string;
  event: string;
  threshold: number | null;
  status: DeliveryStatus;
  httpStatus: number | null;
  error: string | null;
  keyName: string | null;
  keyHashPrefix: string | null;
  agentTag: string | null;
  attempts: number;
  durationMs: number;
  createdAt: Date;
}

interface DeliveryRow {
  id: string;
  org_id: string;
  channel_id: string | null;
  channel_name: string | null;
  channel_kind: string;
  event: string;
  threshold: number | null;
  status: DeliveryStatus;
  http_status: number | null;
  error: string | null;
  key_name: string | null;
  key_hash_prefix: string | null;
  agent_tag: string | null;
  attempts: number;
  duration_ms: number;
  created_at: Date;
}

const COLUMNS =
  "id, org_id, channel_id, channel_name, channel_kind, event, threshold, status, http_status, error, key_name, key_hash_prefix, agent_tag, attempts, duration_ms, created_at";

export async function insertDelivery(db: Queryable, d: DeliveryRecord): Promise<void> {
  await db.query(`INSERT INTO deliveries (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`, [
    d.id,
    d.orgId,
    d.channelId,
    d.channelName,
    d.channelKind,
    d.event,
    d.threshold,
    d.status,
    d.httpStatus,
    d.error,
    d.keyName,
    d.keyHashPrefix,
    d.agentTag,
    d.attempts,
    d.durationMs,
    d.createdAt,
  ]);
}

/** The organisation's last 50 attempts within the retention, newest first. */
export async function recentDeliveries(db: Queryable, orgId: string, now: Date): Promise<DeliveryRecord[]> {
  const r = await db.query<DeliveryRow>(
    `SELECT ${COLUMNS} FROM deliveries
      WHERE org_id = $1 AND created_at > $2
      ORDER BY created_at DESC, id DESC
      LIMIT ${DELIVERY_LIST_LIMIT}`,
    [orgId, retentionCutoff(now)],
  );
  return r.rows.map((row) => ({
    id: row.id,
    orgId: row.org_id,
    channelId: row.channel_id,
    channelName: row.channel_name,
    channelKind: row.channel_kind,
    event: row.event,
    threshold: row.threshold === null ? null : Number(row.threshold),
    status: row.status,
    httpStatus: row.http_status === null ? null : Number(row.http_status),
    error: row.error,
    keyName: row.key_name,
    keyHashPrefix: row.key_hash_prefix,
    agentTag: row.agent_tag,
    attempts: Number(row.attempts),
    durationMs: Number(row.duration_ms),
    createdAt: new Date(row.created_at),
  }));
}

export function retentionCutoff(now: Date): Date {
  return new Date(now.getTime() - DELIVERY_RETENTION_DAYS * 86_400_000);
}

/** The delivery record as the API shows it (Alert delivery record, in the service README). */
export function renderDelivery(d: DeliveryRecord) {
  return {
    id: d.id,
    channel_id: d.channelId,
    channel_name: d.channelName,
    channel_kind: d.channelKind,
    event: d.event,
    threshold: d.threshold,
    status: d.status,
    http_status: d.httpStatus,
    error: d.error,
    key_name: d.keyName,
    key_hash_prefix: d.keyHashPrefix,
    agent_tag: d.agentTag,
    attempts: d.attempts,
    created_at: d.createdAt.toISOString(),
  };
}
