import { randomBytes } from "node:crypto";
import type { Queryable } from "@router/db";
import { toNanos, type Nanodollars } from "@router/money";
import type { RunawayKind } from "../sweep/runaway-rule";

export type SubjectKind = "key" | "agent";
export type FlagAction = "alert" | "paused";

/** A runaway flag as stored ("Runaway flag", without `key_paused`, which the gateway knows, in the service README). */
export interface Flag {
  id: string;
  orgId: string;
  subjectKind: SubjectKind;
  /** The agent name, or the first 12 characters of the key hash. */
  subject: string;
  keyHash: string | null;
  keyName: string | null;
  action: FlagAction;
  kind: RunawayKind;
  windowStart: Date;
  windowEnd: Date;
  spendNanos: Nanodollars;
  usualSpendNanos: Nanodollars;
  requests: bigint;
  usualRequests: number;
  createdAt: Date;
}

/** What the sweep found about a subject; the store decides the action and whether it may flag. */
export type FlagCandidate = Omit<Flag, "id" | "action" | "subject" | "createdAt"> & {
  /** The key's full hash or the agent name: what the once-an-hour gate counts by. */
  subjectId: string;
};

/** Flags are listed for 30 days and kept that long. */
export const FLAG_RETENTION_MS = 30 * 24 * 60 * 60_000;

/** The shown subject of the product's API (the service README): the agent name, or the first 12 characters of the key hash. */
export const KEY_SUBJECT_LENGTH = 12;

function newFlagId(): string {
  return `flag_${randomBytes(16).toString("base64url")}`;
}

// One statement: the subject's gate row is inserted, or moved forward only when its last flag is at
// least an hour old, and the flag is written only when the gate moved. Two sweepers racing for one
// subject serialise on the gate row; the second sees the first's time and writes nothing. The
// action is read from the organisation's setting in the same statement: only a key is ever paused.
const RAISE_FLAG = `WITH gate AS (
  INSERT INTO subject_flags (org_id, subject_kind, subject, last_flagged_at) VALUES ($2, $3, $4, $15)
  ON CONFLICT (org_id, subject_kind, subject) DO UPDATE SET last_flagged_at = EXCLUDED.last_flagged_at
  WHERE subject_flags.last_flagged_at <= $16
  RETURNING org_id
)
INSERT INTO flags (id, org_id, subject_kind, subject, key_hash, key_name, action, kind, window_start, window_end,
  spend_nanodollars, usual_spend_nanodollars, requests, usual_requests, created_at, publish_claimed_until)
SELECT $1, $2, $3, $5, $6, $7,
  CASE WHEN $3::text = 'key' AND (SELECT s.runaway_action FROM settings s WHERE s.org_id = $2) = 'pause'
    THEN 'paused' ELSE 'alert' END,
  $8, $9, $10, $11, $12, $13, $14, $15, $17
FROM gate
RETURNING action`;

/**
 * Flags a subject unless it was flagged less than an hour ago (`flaggedBefore` is the latest last
 * flag that still allows one). The new flag counts as claimed for publishing until `claimUntil`, so
 * another sweeper does not send it while this one does. Null when the subject was flagged recently.
 */
export async function raiseFlag(
  q: Queryable,
  c: FlagCandidate,
  at: { now: Date; flaggedBefore: Date; claimUntil: Date },
): Promise<Flag | null> {
  const id = newFlagId();
  const subject = c.subjectKind === "key" ? c.subjectId.slice(0, KEY_SUBJECT_LENGTH) : c.subjectId;
  const r = await q.query<{ action: FlagAction }>(RAISE_FLAG, [
    id,
    c.orgId,
    c.subjectKind,
    c.subjectId,
    subject,
    c.keyHash,
    c.keyName,
    c.kind,
    c.windowStart,
    c.windowEnd,
    c.spendNanos.toString(),
    c.usualSpendNanos.toString(),
    c.requests.toString(),
    c.usualRequests,
    at.now,
    at.flaggedBefore,
    at.claimUntil,
  ]);
  const row = r.rows[0];
  if (!row) return null;
  return {
    id,
    orgId: c.orgId,
    subjectKind: c.subjectKind,
    subject,
    keyHash: c.keyHash,
    keyName: c.keyName,
    action: row.action,
    kind: c.kind,
    windowStart: c.windowStart,
    windowEnd: c.windowEnd,
    spendNanos: c.spendNanos,
    usualSpendNanos: c.usualSpendNanos,
    requests: c.requests,
    usualRequests: c.usualRequests,
    createdAt: at.now,
  };
}

interface FlagRow {
  id: string;
  org_id: string;
  subject_kind: SubjectKind;
  subject: string;
  key_hash: string | null;
  key_name: string | null;
  action: FlagAction;
  kind: RunawayKind;
  window_start: Date;
  window_end: Date;
  spend_nanodollars: string | number;
  usual_spend_nanodollars: string | number;
  requests: string | number;
  usual_requests: number;
  created_at: Date;
}

const FLAG_COLUMNS = `id, org_id, subject_kind, subject, key_hash, key_name, action, kind, window_start, window_end,
  spend_nanodollars, usual_spend_nanodollars, requests, usual_requests, created_at`;

function fromRow(r: FlagRow): Flag {
  return {
    id: r.id,
    orgId: r.org_id,
    subjectKind: r.subject_kind,
    subject: r.subject,
    keyHash: r.key_hash,
    keyName: r.key_name,
    action: r.action,
    kind: r.kind,
    windowStart: new Date(r.window_start),
    windowEnd: new Date(r.window_end),
    spendNanos: toNanos(r.spend_nanodollars),
    usualSpendNanos: toNanos(r.usual_spend_nanodollars),
    requests: toNanos(r.requests),
    usualRequests: Number(r.usual_requests),
    createdAt: new Date(r.created_at),
  };
}

/** The organisation's flags raised at or after `since`, newest first, at most `limit`. */
export async function listFlags(q: Queryable, orgId: string, since: Date, limit: number): Promise<Flag[]> {
  const r = await q.query<FlagRow>(
    `SELECT ${FLAG_COLUMNS} FROM flags WHERE org_id = $1 AND created_at >= $2 ORDER BY created_at DESC, id DESC LIMIT $3`,
    [orgId, since, limit],
  );
  return r.rows.map(fromRow);
}

/**
 * Claims up to `limit` flags whose event has not reached the bus and that nobody is sending right
 * now (a sweeper that stored a flag and died before publishing it, or whose publish failed), oldest
 * first, until `claimUntil`.
 */
export async function claimUnpublished(q: Queryable, now: Date, claimUntil: Date, limit: number): Promise<Flag[]> {
  const r = await q.query<FlagRow>(
    `UPDATE flags SET publish_claimed_until = $2
     WHERE id IN (
       SELECT id FROM flags
       WHERE published_at IS NULL AND (publish_claimed_until IS NULL OR publish_claimed_until <= $1)
       ORDER BY created_at LIMIT $3 FOR UPDATE SKIP LOCKED
     )
     RETURNING ${FLAG_COLUMNS}`,
    [now, claimUntil, limit],
  );
  return r.rows.map(fromRow).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
}

export async function markPublished(q: Queryable, id: string, now: Date): Promise<void> {
  await q.query("UPDATE flags SET published_at = $2, publish_claimed_until = NULL WHERE id = $1", [id, now]);
}

/** Lets a flag whose publish failed be claimed again at once (by the next sweep). */
export async function releaseClaim(q: Queryable, id: string): Promise<void> {
  await q.query("UPDATE flags SET publish_claimed_until = NULL WHERE id = $1 AND published_at IS NULL", [id]);
}

/**
 * Drops flags raised before `flagsBefore` (the list shows 30 days), and gate rows whose last flag is
 * older than an hour (`gatesBefore`): they no longer hold anything back.
 */
export async function pruneFlags(q: Queryable, flagsBefore: Date, gatesBefore: Date): Promise<void> {
  await q.query("DELETE FROM flags WHERE created_at < $1", [flagsBefore]);
  await q.query("DELETE FROM subject_flags WHERE last_flagged_at < $1", [gatesBefore]);
}
