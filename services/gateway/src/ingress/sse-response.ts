import type { ServerResponse } from "node:http";

const KEEPALIVE = ": router processing\n\n";
/** Quiet time before a keepalive comment when the gateway is not told otherwise. */
export const DEFAULT_KEEPALIVE_MS = 5_000;

/**
 * The client side of a stream: status and headers go out at once with a first keepalive comment,
 * every event is written as soon as it exists (no buffering, no compression), and a comment is
 * sent whenever nothing else was written for `keepaliveMs`.
 */
export class SseResponse {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly res: ServerResponse,
    private readonly keepaliveMs: number,
  ) {}

  open(extraHeaders: Record<string, string>): void {
    this.res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
      ...extraHeaders,
    });
    this.res.socket?.setNoDelay(true);
    this.res.write(KEEPALIVE);
    // One timer, pushed back by every write (`refresh` re-arms it in place), so a comment goes out
    // after exactly `keepaliveMs` of silence and never while events flow.
    this.timer = setTimeout(() => this.keepalive(), this.keepaliveMs);
    this.timer.unref();
  }

  get writable(): boolean {
    return !this.res.destroyed && !this.res.writableEnded;
  }

  /** Writes one `data:` event whose JSON text is given. */
  data(json: string): void {
    if (!this.writable) return;
    this.timer?.refresh();
    this.res.write(`data: ${json}\n\n`);
  }

  /** Writes one named event (`event:` then `data:`), for formats whose clients dispatch on the name. */
  event(name: string, json: string): void {
    if (!this.writable) return;
    this.timer?.refresh();
    this.res.write(`event: ${name}\ndata: ${json}\n\n`);
  }

  /** Writes `data: [DONE]` and ends the response. */
  done(): void {
    this.end("data: [DONE]\n\n");
  }

  /** Ends the response, after `last` when given. */
  end(last?: string): void {
    this.stop();
    if (this.writable) this.res.end(last);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private keepalive(): void {
    if (!this.timer || !this.writable) return;
    this.res.write(KEEPALIVE);
    this.timer.refresh();
  }
}
