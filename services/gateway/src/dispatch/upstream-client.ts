import { Agent, type Dispatcher } from "undici";
import type { UpstreamHttpRequest } from "@router/providers";

export interface UpstreamTimeouts {
  /** TCP/TLS connect. */
  connectMs: number;
  /** Until response headers, non-stream (the whole completion is computed first). */
  headersMs: number;
  /** Until response headers, stream. */
  streamHeadersMs: number;
  /** Between two body chunks. */
  idleMs: number;
}

export const DEFAULT_TIMEOUTS: UpstreamTimeouts = {
  connectMs: 10_000,
  headersMs: 600_000,
  streamHeadersMs: 120_000,
  idleMs: 120_000,
};

/**
 * The one HTTP client for provider calls: an undici Agent keeps a keep-alive pool per origin, so a
 * request reuses a warm connection instead of building a client or a TLS session.
 */
export class UpstreamClient {
  private readonly agent: Agent;
  readonly timeouts: UpstreamTimeouts;

  constructor(timeouts: Partial<UpstreamTimeouts> = {}) {
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...timeouts };
    this.agent = new Agent({
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      connect: { timeout: this.timeouts.connectMs },
      pipelining: 1,
    });
  }

  send(req: UpstreamHttpRequest, stream: boolean, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    return this.agent.request({
      origin: req.url.origin,
      path: req.url.pathname + req.url.search,
      method: "POST",
      headers: req.headers,
      body: req.body,
      signal,
      headersTimeout: stream ? this.timeouts.streamHeadersMs : this.timeouts.headersMs,
      bodyTimeout: this.timeouts.idleMs,
    });
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
