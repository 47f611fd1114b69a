import type { RequestListener, ServerResponse } from "node:http";
import { DomainError } from "@router/errors";

/** The abort reason of a request cut because the gateway stopped: never the client's cancellation. */
export const GATEWAY_SHUTDOWN = new DomainError("router.gateway_shutdown", "the gateway is shutting down; retry the request", { status: 503 });

export const isShutdown = (signal: AbortSignal): boolean => signal.aborted && signal.reason === GATEWAY_SHUTDOWN;

/**
 * A gateway's graceful stop. While it drains, readiness fails and every answer closes its
 * connection; requests in flight finish on their own within the grace period; what is still open
 * then is cut with `GATEWAY_SHUTDOWN` (a stream gets its error chunk and is recorded with that
 * reason). The work a request leaves behind when it ends (settlement, event) is tracked too, so the
 * stop waits for it before any channel closes.
 */
export class Drain {
  private draining = false;
  private readonly open = new Set<ServerResponse>();
  private readonly work = new Set<Promise<unknown>>();
  /** Set when the grace ended: what arrives later is cut at once. */
  private graceEnded = false;
  /** The requests in flight, cut when the grace ends. */
  private readonly cuttable = new Set<AbortController>();
  private idle: (() => void) | null = null;
  /** Ends the grace at once. */
  private endWait: (() => void) | null = null;
  private hurried = false;
  private graceEndsAt: number | undefined;

  get isDraining(): boolean {
    return this.draining;
  }

  /** Counts every request of `listener` while it is open. */
  track(listener: RequestListener): RequestListener {
    return (req, res) => {
      this.open.add(res);
      res.once("close", () => {
        this.open.delete(res);
        if (this.open.size === 0) this.idle?.();
      });
      if (this.draining) res.shouldKeepAlive = false;
      listener(req, res);
    };
  }

  /**
   * Aborts `request` with `GATEWAY_SHUTDOWN` when the grace ends (at once when it has ended); the
   * function returned forgets it, for when the request closes.
   */
  cutsWith(request: AbortController): () => void {
    if (this.graceEnded) {
      request.abort(GATEWAY_SHUTDOWN);
      return () => undefined;
    }
    this.cuttable.add(request);
    return () => this.cuttable.delete(request);
  }

  /** Work that must be done before the process may close its channels (it never rejects here). */
  defer(work: Promise<unknown>): void {
    const tracked = work.catch(() => undefined).finally(() => this.work.delete(tracked));
    this.work.add(tracked);
  }

  get inFlight(): number {
    return this.open.size;
  }

  /**
   * While draining with requests open: how many are streams (server-sent events) and how many plain
   * requests, and when the grace ends (epoch ms), for a person watching the stop. Else undefined.
   */
  progress(): { streams: number; requests: number; graceEndsAt: number } | undefined {
    if (!this.draining || this.graceEndsAt === undefined || this.open.size === 0) return undefined;
    let streams = 0;
    // Readable because every answer gets x-request-id before its head: Node keeps the headers given
    // to writeHead only once a header was set.
    for (const res of this.open) if (String(res.getHeader("content-type") ?? "").startsWith("text/event-stream")) streams++;
    return { streams, requests: this.open.size - streams, graceEndsAt: this.graceEndsAt };
  }

  /**
   * Ends the grace now (a second Ctrl-C): what is open is cut as at the end of the grace, so each
   * stream gets its error chunk and is recorded, and the work they leave is still waited for.
   */
  hurry(): void {
    this.hurried = true;
    this.endWait?.();
  }

  /**
   * Drains: from now on readiness fails and answers close their connections; resolves once every
   * request ended, cutting the ones still open after `graceMs` (and waiting `cutMs` more for them to
   * write their last chunk), then once the work they left is done.
   */
  async run(graceMs: number, cutMs = 2_000): Promise<{ cut: number }> {
    this.draining = true;
    for (const res of this.open) res.shouldKeepAlive = false;
    this.graceEndsAt = Date.now() + graceMs;
    let cut = 0;
    if (!(await this.settled(this.hurried ? 0 : graceMs, true))) {
      cut = this.open.size;
      this.graceEnded = true;
      for (const request of this.cuttable) request.abort(GATEWAY_SHUTDOWN);
      this.cuttable.clear();
      // Hurried too: the cut requests write their last chunk and hand on their records (nothing lost).
      await this.settled(cutMs, false);
    }
    while (this.work.size > 0) await Promise.all([...this.work]);
    return { cut };
  }

  private settled(ms: number, hurriable: boolean): Promise<boolean> {
    if (this.open.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const end = (settled: boolean) => {
        clearTimeout(timer);
        this.idle = null;
        this.endWait = null;
        resolve(settled);
      };
      const timer = setTimeout(() => end(false), ms);
      this.idle = () => end(true);
      if (hurriable) this.endWait = () => end(false);
    });
  }
}
