import { EventStreamCodec, type Message } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { asRecord, asString, parseRecord, type SseMessage, type StreamFramer, type StreamFramerFactory } from "../types";

/**
 * Bedrock streams AWS event-stream frames (`application/vnd.amazon.eventstream`): binary messages
 * with typed headers and a CRC each. Every frame is an event (`:message-type: event`, named by
 * `:event-type`), an exception (`:message-type: exception`, named by `:exception-type`) or an
 * error (`:message-type: error`, `:error-code`).
 */

const headerText = (m: Message, name: string): string | null => {
  const h = m.headers[name];
  return h?.type === "string" ? h.value : null;
};

/** An exception or error frame, as the error event the Anthropic and Converse decoders read. */
function errorMessage(type: string, message: string | null): SseMessage {
  return { event: "error", data: JSON.stringify({ type: "error", error: { type, message } }) };
}

// A frame's total length is its first four bytes; the service caps a frame at 16 MB.
const MAX_FRAME_BYTES = 16 * 1024 * 1024;
const PRELUDE_BYTES = 12;
const CRC_BYTES = 4;

/**
 * A framer that hands on each frame as `toMessage` reads it. The body is cut into frames by the
 * length each frame begins with; the codec checks each frame's CRCs and reads its headers. A body
 * that ends inside a frame, or a frame that does not decode, is reported as an error event (the
 * stream cannot be trusted past it) rather than thrown from `feed`.
 */
function eventStreamFramer(toMessage: (eventType: string, payload: string) => SseMessage | null): StreamFramerFactory {
  return (onMessage: (m: SseMessage) => void): StreamFramer => {
    const codec = new EventStreamCodec(toUtf8, fromUtf8);
    let pending: Buffer = Buffer.alloc(0);
    let broken = false;
    const handle = (m: Message): void => {
      const payload = toUtf8(m.body);
      const kind = headerText(m, ":message-type");
      if (kind === "exception") {
        const body = parseRecord(payload);
        onMessage(errorMessage(headerText(m, ":exception-type") ?? "exception", asString(body?.message) ?? asString(body?.Message)));
      } else if (kind === "error") {
        onMessage(errorMessage(headerText(m, ":error-code") ?? "error", headerText(m, ":error-message")));
      } else {
        const out = toMessage(headerText(m, ":event-type") ?? "", payload);
        if (out) onMessage(out);
      }
    };
    const fail = (): void => {
      broken = true;
      pending = Buffer.alloc(0);
      onMessage(errorMessage("malformed_event_stream", null));
    };
    return {
      feed(bytes) {
        if (broken) return;
        pending = pending.length ? Buffer.concat([pending, bytes]) : Buffer.from(bytes);
        while (pending.length >= 4) {
          const total = pending.readUInt32BE(0);
          if (total < PRELUDE_BYTES + CRC_BYTES || total > MAX_FRAME_BYTES) return fail();
          if (pending.length < total) return;
          let message: Message;
          try {
            message = codec.decode(pending.subarray(0, total));
          } catch {
            return fail();
          }
          pending = pending.subarray(total);
          handle(message);
        }
      },
      end() {
        if (!broken && pending.length) fail();
      },
    };
  };
}

/**
 * InvokeModelWithResponseStream: each `chunk` event's payload is `{"bytes": "<base64>"}`, the
 * base64 of one event of the model's own stream; for Claude, an Anthropic Messages event, handed on
 * as the server-sent event Anthropic would have sent (its `type` as the event name).
 */
export const invokeStreamFramer: StreamFramerFactory = eventStreamFramer((eventType, payload) => {
  if (eventType !== "chunk") return null;
  const bytes = asString(parseRecord(payload)?.bytes);
  if (bytes === null) return null;
  const data = Buffer.from(bytes, "base64").toString("utf8");
  const type = asString(asRecord(parseRecord(data))?.type);
  return type ? { event: type, data } : { data };
});

/** ConverseStream: each event's payload is its member's JSON, named by the event type (`contentBlockDelta`). */
export const converseStreamFramer: StreamFramerFactory = eventStreamFramer((eventType, payload) => (eventType ? { event: eventType, data: payload } : null));
