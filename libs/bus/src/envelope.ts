import { randomUUID } from "node:crypto";
import { invalid } from "@router/errors";
import type { IncomingEvent, OutgoingEvent } from "./port";

export const HEADER_EVENT_ID = "event-id";
export const HEADER_EVENT_TYPE = "event-type";
export const HEADER_CONTENT_TYPE = "content-type";
export const PROTOBUF_CONTENT_TYPE = "application/x-protobuf";

/** Headers a dead-lettered event carries besides its own. */
export const HEADER_DLQ_ORIGINAL_TOPIC = "dlq-original-topic";
export const HEADER_DLQ_ATTEMPTS = "dlq-attempts";
export const HEADER_DLQ_REASON = "dlq-reason";

/** An event as it travels: id assigned and the standard headers set. */
export interface Envelope {
  id: string;
  topic: string;
  key: string;
  type: string;
  payload: Uint8Array;
  /** Includes `event-id`, `event-type` and `content-type`. */
  headers: Record<string, string>;
}

/** Validates an outgoing event and stamps its id and standard headers; copies the payload. */
export function envelopeOf(event: OutgoingEvent): Envelope {
  if (!event.topic) throw invalid("topic", "is required");
  if (typeof event.key !== "string") throw invalid("key", "must be a string");
  if (!event.type) throw invalid("type", "is required");
  if (!(event.payload instanceof Uint8Array)) throw invalid("payload", "must be bytes");
  const id = event.id ?? randomUUID();
  return {
    id,
    topic: event.topic,
    key: event.key,
    type: event.type,
    // A Buffer, so the Redis and Kafka clients take it as it is.
    payload: payloadCopy(event.payload),
    headers: {
      [HEADER_CONTENT_TYPE]: PROTOBUF_CONTENT_TYPE,
      ...event.headers,
      [HEADER_EVENT_ID]: id,
      [HEADER_EVENT_TYPE]: event.type,
    },
  };
}

/**
 * A copy of a payload that no other holder can change. A Buffer taken from Node's pooled memory:
 * a new ArrayBuffer per event costs three to five times as much to make, and each one is tracked
 * and swept apart by the garbage collector (docs/performance.md).
 */
export function payloadCopy(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes);
}

/** The payload's bytes as a Buffer for a broker client, without copying them (`envelopeOf` made it one). */
export function payloadBytes(envelope: Envelope): Buffer {
  const p = envelope.payload;
  return Buffer.isBuffer(p) ? p : Buffer.from(p.buffer, p.byteOffset, p.byteLength);
}

export function incomingOf(envelope: Envelope, attempt: number): IncomingEvent {
  return {
    id: envelope.id,
    topic: envelope.topic,
    key: envelope.key,
    type: envelope.type,
    payload: envelope.payload,
    headers: { ...envelope.headers },
    attempt,
  };
}

/** The copy of a poisoned event that goes to `<topic>.dlq`, same id and key, with why it got there. */
export function deadLetterOf(envelope: Envelope, attempts: number, reason: unknown): Envelope {
  return {
    ...envelope,
    topic: dlqTopicOf(envelope.topic),
    headers: {
      ...envelope.headers,
      [HEADER_DLQ_ORIGINAL_TOPIC]: envelope.topic,
      [HEADER_DLQ_ATTEMPTS]: String(attempts),
      [HEADER_DLQ_REASON]: reasonOf(reason),
    },
  };
}

export function dlqTopicOf(topic: string): string {
  return `${topic}.dlq`;
}

// Only the error's name and message, shortened: handler errors may quote data, the header must stay small.
function reasonOf(reason: unknown): string {
  const text = reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason);
  return text.slice(0, 200);
}
