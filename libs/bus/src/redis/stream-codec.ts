import {
  HEADER_CONTENT_TYPE,
  HEADER_EVENT_ID,
  HEADER_EVENT_TYPE,
  PROTOBUF_CONTENT_TYPE,
  payloadBytes,
  payloadCopy,
  type Envelope,
} from "../envelope";
import type { RedisEntryLayout } from "../port";

// Stream entry fields: the standard headers under their own names, other headers prefixed.
const KEY = "key";
const PAYLOAD = "payload";
const HEADER_PREFIX = "h:";
const STANDARD = new Set([HEADER_EVENT_ID, HEADER_EVENT_TYPE, HEADER_CONTENT_TYPE]);
const EMPTY = new Uint8Array();
/** The packed layout's one field name, and its first byte as a reader sees it. */
const PACKED = "e";
const PACKED_BYTE = PACKED.charCodeAt(0);
const HEAD_LENGTH_BYTES = 4;

/**
 * The entry's field-value list for XADD, in `layout` (`RedisEntryLayout`). Readers take both.
 * - `fields`: one field per standard header (`event-id`, `event-type`, `content-type`), `key`,
 *   `payload`, and `h:<name>` for every other header. What every release has written so far.
 * - `packed`: one field, `e`, holding the whole envelope: a 4-byte big-endian length, that many
 *   bytes of JSON (`{"id","type","key","headers"}`, headers without the id and type), then the
 *   payload. Redis and every consumer group handle two bulk strings an entry instead of ten.
 * A reader of a release before `packed` existed takes a packed entry as an event without an id,
 * so `packed` is for installs whose every service reads it (docs/runbook.md, "Redis").
 */
export function fieldsOf(envelope: Envelope, layout: RedisEntryLayout = "fields"): Array<string | Buffer> {
  if (layout === "packed") return [PACKED, packedOf(envelope)];
  const fields: Array<string | Buffer> = [
    HEADER_EVENT_ID,
    envelope.id,
    HEADER_EVENT_TYPE,
    envelope.type,
    HEADER_CONTENT_TYPE,
    envelope.headers[HEADER_CONTENT_TYPE] ?? PROTOBUF_CONTENT_TYPE,
    KEY,
    envelope.key,
    PAYLOAD,
    payloadBytes(envelope),
  ];
  for (const [name, value] of Object.entries(envelope.headers)) {
    if (!STANDARD.has(name)) fields.push(`${HEADER_PREFIX}${name}`, value);
  }
  return fields;
}

interface PackedHead {
  id: string;
  type: string;
  key: string;
  headers: Record<string, string>;
}

function packedOf(envelope: Envelope): Buffer {
  const headers: Record<string, string> = { [HEADER_CONTENT_TYPE]: PROTOBUF_CONTENT_TYPE };
  for (const [name, value] of Object.entries(envelope.headers)) {
    if (name !== HEADER_EVENT_ID && name !== HEADER_EVENT_TYPE) headers[name] = value;
  }
  const head = JSON.stringify({ id: envelope.id, type: envelope.type, key: envelope.key, headers } satisfies PackedHead);
  const headLength = Buffer.byteLength(head);
  const payload = payloadBytes(envelope);
  const entry = Buffer.allocUnsafe(HEAD_LENGTH_BYTES + headLength + payload.length);
  entry.writeUInt32BE(headLength, 0);
  entry.write(head, HEAD_LENGTH_BYTES, "utf8");
  payload.copy(entry, HEAD_LENGTH_BYTES + headLength);
  return entry;
}

/** The envelope an entry holds, in either layout. An entry missing what it needs reads as an event without an id. */
export function envelopeOfFields(topic: string, fields: Buffer[]): Envelope {
  if (fields.length === 2 && fields[0]!.length === 1 && fields[0]![0] === PACKED_BYTE) return envelopeOfPacked(topic, fields[1]!);
  const headers: Record<string, string> = {};
  let key = "";
  let payload: Uint8Array = EMPTY;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i]!.toString("utf8");
    const value = fields[i + 1]!;
    // A copy: the reply's buffers may be slices of the client's reused parser memory.
    if (name === PAYLOAD) payload = payloadCopy(value);
    else if (name === KEY) key = value.toString("utf8");
    else if (STANDARD.has(name)) headers[name] = value.toString("utf8");
    else if (name.startsWith(HEADER_PREFIX)) headers[name.slice(HEADER_PREFIX.length)] = value.toString("utf8");
  }
  return {
    id: headers[HEADER_EVENT_ID] ?? "",
    topic,
    key,
    type: headers[HEADER_EVENT_TYPE] ?? "",
    payload,
    headers,
  };
}

/** What a packed entry this codec cannot read stands for: an event without an id, as a fields entry missing its fields. */
function unreadableEntry(topic: string): Envelope {
  return { id: "", topic, key: "", type: "", payload: EMPTY, headers: {} };
}

function envelopeOfPacked(topic: string, entry: Buffer): Envelope {
  if (entry.length < HEAD_LENGTH_BYTES) return unreadableEntry(topic);
  const headEnd = HEAD_LENGTH_BYTES + entry.readUInt32BE(0);
  if (headEnd > entry.length) return unreadableEntry(topic);
  let head: Partial<PackedHead> | null;
  try {
    head = JSON.parse(entry.toString("utf8", HEAD_LENGTH_BYTES, headEnd)) as Partial<PackedHead> | null;
  } catch {
    return unreadableEntry(topic);
  }
  if (typeof head !== "object" || head === null) return unreadableEntry(topic);
  const { id, type, key } = head;
  if (typeof id !== "string" || typeof type !== "string" || typeof key !== "string") return unreadableEntry(topic);
  // The parsed head is this call's own: its headers become the envelope's, checked in place.
  const headers = (typeof head.headers === "object" && head.headers !== null ? head.headers : {}) as Record<string, unknown>;
  for (const name of Object.keys(headers)) if (typeof headers[name] !== "string") delete headers[name];
  headers[HEADER_EVENT_ID] = id;
  headers[HEADER_EVENT_TYPE] = type;
  // A copy, as above.
  return { id, topic, key, type, payload: payloadCopy(entry.subarray(headEnd)), headers: headers as Record<string, string> };
}

/** An entry as Redis returns it; fields are null when the entry was deleted (trimmed) after delivery. */
export interface StreamEntry {
  id: string;
  fields: Buffer[] | null;
}

export function entriesOf(reply: unknown): StreamEntry[] {
  if (!Array.isArray(reply)) return [];
  return reply.flatMap((item): StreamEntry[] => {
    if (!Array.isArray(item) || item.length < 2) return [];
    const [id, fields] = item as [unknown, unknown];
    return [{ id: text(id), fields: Array.isArray(fields) ? (fields as Buffer[]) : null }];
  });
}

/** XREADGROUP reply (RESP2): `[[stream, entries], ...]` or null. */
export function streamsOf(reply: unknown): Array<{ stream: string; entries: StreamEntry[] }> {
  if (!Array.isArray(reply)) return [];
  return reply.flatMap((item) => {
    if (!Array.isArray(item) || item.length < 2) return [];
    return [{ stream: text(item[0]), entries: entriesOf(item[1]) }];
  });
}

/** XAUTOCLAIM reply: `[next-start, entries, deleted-ids]`. */
export function autoclaimOf(reply: unknown): { entries: StreamEntry[]; deleted: string[] } {
  if (!Array.isArray(reply)) return { entries: [], deleted: [] };
  const deleted = Array.isArray(reply[2]) ? (reply[2] as unknown[]).map(text) : [];
  return { entries: entriesOf(reply[1]), deleted };
}

export interface PendingEntry {
  id: string;
  consumer: string;
  idleMs: number;
  deliveries: number;
}

/** XPENDING extended form reply: `[[id, consumer, idle, deliveries], ...]`. */
export function pendingOf(reply: unknown): PendingEntry[] {
  if (!Array.isArray(reply)) return [];
  return reply.flatMap((item): PendingEntry[] => {
    if (!Array.isArray(item) || item.length < 4) return [];
    return [{ id: text(item[0]), consumer: text(item[1]), idleMs: Number(text(item[2])), deliveries: Number(text(item[3])) }];
  });
}

/** Orders stream ids (`ms-seq`). */
export function compareIds(a: string, b: string): number {
  const [am = "0", as = "0"] = a.split("-");
  const [bm = "0", bs = "0"] = b.split("-");
  const ms = BigInt(am) - BigInt(bm);
  if (ms !== 0n) return ms < 0n ? -1 : 1;
  const seq = BigInt(as) - BigInt(bs);
  return seq === 0n ? 0 : seq < 0n ? -1 : 1;
}

export function text(value: unknown): string {
  if (Buffer.isBuffer(value)) return value.toString("utf8");
  return String(value);
}
