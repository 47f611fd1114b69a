import { createParser, type EventSourceParser } from "eventsource-parser";
import type { StreamDecoder, StreamEvent } from "../providers/types";

/**
 * Pulls decoded stream events out of a provider's SSE body one at a time, reading the network only
 * when every event of the last read was taken. Resumable: the cascade reads up to the first content
 * event, commits, then keeps reading from the same reader.
 */
export class StreamEventReader {
  private readonly queue: StreamEvent[] = [];
  private next_ = 0;
  private ended = false;
  private readonly parser: EventSourceParser;
  private readonly text = new TextDecoder();

  constructor(
    private readonly body: AsyncIterator<Uint8Array>,
    decoder: StreamDecoder,
  ) {
    this.parser = createParser({ onEvent: (e) => decoder.decode({ event: e.event, data: e.data }, this.queue) });
  }

  /** The next event, or null at the end of the body. Rejects when the body fails. */
  async next(): Promise<StreamEvent | null> {
    while (this.next_ >= this.queue.length) {
      this.queue.length = 0;
      this.next_ = 0;
      if (this.ended) return null;
      const r = await this.body.next();
      if (r.done) {
        this.parser.feed(this.text.decode());
        // A last event without its blank line still counts.
        this.parser.reset({ consume: true });
        this.ended = true;
        continue;
      }
      this.parser.feed(this.text.decode(r.value, { stream: true }));
    }
    return this.queue[this.next_++] ?? null;
  }
}
