import { createParser } from "eventsource-parser";
import type { SseMessage, StreamDecoder, StreamEvent, StreamFramer, StreamFramerFactory } from "@router/providers";

/** Server-sent events, the framing of every provider but Bedrock. */
export const sseFramer: StreamFramerFactory = (onMessage: (m: SseMessage) => void): StreamFramer => {
  const parser = createParser({ onEvent: (e) => onMessage({ event: e.event, data: e.data }) });
  const text = new TextDecoder();
  return {
    feed: (bytes) => parser.feed(text.decode(bytes, { stream: true })),
    end: () => {
      parser.feed(text.decode());
      // A last event without its blank line still counts.
      parser.reset({ consume: true });
    },
  };
};

/**
 * Pulls decoded stream events out of a provider's stream body one at a time, reading the network
 * only when every event of the last read was taken. Resumable: the cascade reads up to the first
 * content event, commits, then keeps reading from the same reader.
 */
export class StreamEventReader {
  private readonly queue: StreamEvent[] = [];
  private next_ = 0;
  private ended = false;
  private readonly framer: StreamFramer;

  constructor(
    private readonly body: AsyncIterator<Uint8Array>,
    decoder: StreamDecoder,
    framing: StreamFramerFactory = sseFramer,
  ) {
    this.framer = framing((message) => decoder.decode(message, this.queue));
  }

  /** The next event, or null at the end of the body. Rejects when the body fails. */
  async next(): Promise<StreamEvent | null> {
    while (this.next_ >= this.queue.length) {
      this.queue.length = 0;
      this.next_ = 0;
      if (this.ended) return null;
      const r = await this.body.next();
      if (r.done) {
        this.framer.end();
        this.ended = true;
        continue;
      }
      this.framer.feed(r.value);
    }
    return this.queue[this.next_++] ?? null;
  }
}
