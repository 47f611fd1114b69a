import type { IncomingEvent } from "@router/bus";
import type { Logger } from "@router/logging";

/** Thrown for an event this consumer can never act on; the bus retries it, then dead-letters it. */
export class UnusableEventError extends Error {
  constructor(reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.name = "UnusableEventError";
  }
}

/**
 * Decodes a protobuf payload and applies `check` (which names what is wrong, or returns null).
 * The payload itself never reaches the log: it is opaque bytes.
 */
export function decodeOrThrow<T>(event: IncomingEvent, decode: (bytes: Uint8Array) => T, check: (decoded: T) => string | null, log: Logger): T {
  const where = { eventId: event.id, topic: event.topic, attempt: event.attempt };
  let decoded: T;
  try {
    decoded = decode(event.payload);
  } catch (err) {
    log.error({ ...where, reason: err instanceof Error ? err.message : String(err) }, "alerts.event.undecodable");
    throw new UnusableEventError(`${event.topic} payload cannot be decoded`, { cause: err });
  }
  const problem = check(decoded);
  if (problem !== null) {
    log.error({ ...where, reason: problem }, "alerts.event.undecodable");
    throw new UnusableEventError(`${event.topic} payload ${problem}`);
  }
  return decoded;
}
