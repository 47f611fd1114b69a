import type { IncomingHttpHeaders } from "node:http";
import { Agent, errors, type Dispatcher } from "undici";
import { utf8Text } from "@router/http-kit";
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

  /** A request whose answer is read as a stream (`body`). */
  send(req: UpstreamHttpRequest, stream: boolean, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    return this.agent.request({ ...this.options(req, stream), signal });
  }

  /**
   * A request whose answer is wanted whole: its chunks are gathered as they come, without the
   * stream, the async resource and the body mixin that `request` builds around every answer.
   * `reached.status` is set as soon as the status arrives, for a body that then fails.
   */
  sendWhole(req: UpstreamHttpRequest, signal: AbortSignal, reached: { status: number | null } = { status: null }): Promise<WholeAnswer> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(abortReason(signal));
        return;
      }
      this.agent.dispatch(this.options(req, false), new WholeAnswerHandler(signal, reached, resolve, reject));
    });
  }

  private options(req: UpstreamHttpRequest, stream: boolean): Dispatcher.DispatchOptions {
    return {
      origin: req.url.origin,
      path: req.url.pathname + req.url.search,
      method: "POST",
      headers: req.headers,
      body: req.body,
      headersTimeout: stream ? this.timeouts.streamHeadersMs : this.timeouts.headersMs,
      bodyTimeout: this.timeouts.idleMs,
    };
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** An answer read whole: its status, headers and body as text (UTF-8, without a byte order mark). */
export interface WholeAnswer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** What an aborted request fails with: the signal's reason when it is an error, else undici's own. */
function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new errors.RequestAbortedError();
}

/** Gathers one answer's chunks; settles once, on its end or its first error (an abort is one). */
class WholeAnswerHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private headers: IncomingHttpHeaders = {};
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private settled = false;
  private readonly onAbort = (): void => {
    if (this.controller) this.controller.abort(abortReason(this.signal));
    else this.fail(abortReason(this.signal));
  };

  constructor(
    private readonly signal: AbortSignal,
    private readonly reached: { status: number | null },
    private readonly resolve: (answer: WholeAnswer) => void,
    private readonly reject: (err: unknown) => void,
  ) {
    signal.addEventListener("abort", this.onAbort, { once: true });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.settled) controller.abort(abortReason(this.signal));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // 1xx answers are informational: the final one follows.
    if (statusCode < 200) return;
    this.reached.status = statusCode;
    this.headers = headers;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.settled = true;
    this.signal.removeEventListener("abort", this.onAbort);
    this.resolve({ statusCode: this.reached.status ?? 0, headers: this.headers, text: utf8Text(this.chunks, this.size) });
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.fail(err);
  }

  private fail(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.signal.removeEventListener("abort", this.onAbort);
    this.reject(err);
  }
}
