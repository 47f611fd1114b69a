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
  private readonly shutdown = new AbortController();
  private idle: (() => void) | null = null;

  get isDraining(): boolean {
    return this.draining;
  }

  /** Fires with `GATEWAY_SHUTDOWN` when the grace period is over. */
  get signal(): AbortSignal {
    return this.shutdown.signal;
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

  /** Work that must be done before the process may close its channels (it never rejects here). */
  defer(work: Promise<unknown>): void {
    const tracked = work.catch(() => undefined).finally(() => this.work.delete(tracked));
    this.work.add(tracked);
  }

  get inFlight(): number {
    return this.open.size;
  }

  /**
   * Drains: from now on readiness fails and answers close their connections; resolves once every
   * request ended, cutting the ones still open after `graceMs` (and waiting `cutMs` more for them to
   * write their last chunk), then once the work they left is done.
   */
  async run(graceMs: number, cutMs = 2_000): Promise<{ cut: number }> {
    this.draining = true;
    for (const res of this.open) res.shouldKeepAlive = false;
    let cut = 0;
    if (!(await this.settled(graceMs))) {
      cut = this.open.size;
      this.shutdown.abort(GATEWAY_SHUTDOWN);
      await this.settled(cutMs);
    }
    while (this.work.size > 0) await Promise.all([...this.work]);
    return { cut };
  }

  private settled(ms: number): Promise<boolean> {
    if (this.open.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.idle = null;
        resolve(false);
      }, ms);
      this.idle = () => {
        clearTimeout(timer);
        this.idle = null;
        resolve(true);
      };
    });
  }
}
