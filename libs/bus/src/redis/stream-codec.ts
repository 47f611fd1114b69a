import {
  HEADER_CONTENT_TYPE,
  HEADER_EVENT_ID,
  HEADER_EVENT_TYPE,
  PROTOBUF_CONTENT_TYPE,
  payloadBytes,
  payloadCopy,
  type Envelope,
} from "../envelope";

// Stream entry fields: the standard headers under their own names, other headers prefixed.
const KEY = "key";
const PAYLOAD = "payload";
const HEADER_PREFIX = "h:";
const STANDARD = new Set([HEADER_EVENT_ID, HEADER_EVENT_TYPE, HEADER_CONTENT_TYPE]);
const EMPTY = new Uint8Array();

export function fieldsOf(envelope: Envelope): Array<string | Buffer> {
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

export function envelopeOfFields(topic: string, fields: Buffer[]): Envelope {
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
