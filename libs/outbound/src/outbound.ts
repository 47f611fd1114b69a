import { rootCertificates } from "node:tls";
import { setTimeout as sleep } from "node:timers/promises";
import fastq from "fastq";
import retry from "retry";
import { Agent, request } from "undici";
import type { Logger } from "@router/logging";
import { systemClock, type Clock } from "@router/money";
import { AllowedHosts, isIpLiteral } from "./addresses";
import { connectionFailure, statusFailure, type AttemptFailure } from "./failure";
import { guardedLookup, refusedRange, RefusedAddressError, systemResolve, type Resolve } from "./guarded-lookup";
import { SIGNATURE_HEADER, signatureHeaderValue } from "./signature";
import { targetUrlProblem } from "./target-url";

/** One body for one external target. */
export interface OutboundMessage {
  /** The target, checked when it was saved; checked again (form and resolved address) on delivery. */
  url: string;
  /** Sent as-is; the signature covers exactly these bytes. */
  body: string;
  /** Default `application/json`. */
  contentType?: string;
  /** Extra request headers (e.g. a vendor key for an OTLP receiver). */
  headers?: Record<string, string>;
  /** When set, every attempt carries `x-router-signature` (HMAC-SHA256 over `<t>.<body>`). */
  signingSecret?: string;
}

/** `sent`: a 2xx answer. `failed`: every allowed attempt failed. `skipped`: never attempted (queue full, stopping). */
export type DeliveryStatus = "sent" | "failed" | "skipped";

export interface DeliveryOutcome {
  status: DeliveryStatus;
  /** The receiver's last HTTP status, or null when none answered. */
  httpStatus: number | null;
  /** Why it did not succeed, in our own words (a receiver's body is never read); null when sent. */
  error: string | null;
  /** Attempts made (0 when skipped). */
  attempts: number;
  /** From the first attempt to the outcome, by the injected clock. */
  durationMs: number;
}

export interface OutboundOptions {
  log: Logger;
  /** Timestamps of signatures and durations. Default: the system clock. */
  clock?: Clock;
  /** Per attempt: connect, TLS and the receiver's answer. Default 5000. */
  timeoutMs?: number;
  /** Attempts after the first, for network errors, timeouts, 5xx and 429. Default 3. */
  retries?: number;
  /** First backoff delay; doubles per retry, with jitter. Default 500. */
  retryDelayMs?: number;
  /** Cap on one backoff delay (a receiver's Retry-After included). Default 10000. */
  maxRetryDelayMs?: number;
  /** Deliveries in flight at once. Default 8. */
  concurrency?: number;
  /** Deliveries waiting for a slot; past it a delivery is `skipped` at once. Default 1000. */
  queueLimit?: number;
  /** How long `close` lets queued deliveries finish before aborting them. Default 5000. */
  closeTimeoutMs?: number;
  /** TEST ONLY (`ROUTER_OUTBOUND_ALLOW_HOSTS`): hosts and addresses let through on any port, loopback included. */
  allowHosts?: readonly string[];
  /** TEST ONLY (`ROUTER_OUTBOUND_CA_FILE`): one more trusted CA (PEM), for receivers with a test certificate. */
  ca?: string;
  /** DNS resolution; tests map names to addresses by hand. Default: the system resolver. */
  resolve?: Resolve;
  userAgent?: string;
}

export interface OutboundStats {
  running: number;
  queued: number;
}

const DEFAULTS = {
  timeoutMs: 5_000,
  retries: 3,
  retryDelayMs: 500,
  maxRetryDelayMs: 10_000,
  concurrency: 8,
  queueLimit: 1_000,
  closeTimeoutMs: 5_000,
  userAgent: "router-outbound/1",
};

type AttemptResult = { ok: true; httpStatus: number } | ({ ok: false } & AttemptFailure);

/**
 * Delivers bodies to external targets safely: only public https addresses (checked on the resolved
 * address the socket connects to), no redirects, a timeout per attempt, retries with exponential
 * backoff and jitter, and a bounded queue with a concurrency limit that never blocks the caller.
 * `deliver` never rejects: every end is an outcome.
 */
export class Outbound {
  private readonly opts: Required<Omit<OutboundOptions, "allowHosts" | "ca" | "resolve">>;
  private readonly allowed: AllowedHosts;
  private readonly agent: Agent;
  private readonly queue: fastq.queueAsPromised<OutboundMessage, DeliveryOutcome>;
  private readonly stopping = new AbortController();
  private closed = false;

  constructor(options: OutboundOptions) {
    this.opts = {
      ...DEFAULTS,
      clock: systemClock,
      ...definedOnly(options),
    } as Required<Omit<OutboundOptions, "allowHosts" | "ca" | "resolve">>;
    for (const key of ["timeoutMs", "concurrency", "queueLimit"] as const) {
      if (!Number.isInteger(this.opts[key]) || this.opts[key] < 1) throw new Error(`outbound ${key} must be a whole number of at least 1`);
    }
    if (!Number.isInteger(this.opts.retries) || this.opts.retries < 0) throw new Error("outbound retries must be a whole number, 0 or more");
    this.allowed = new AllowedHosts(options.allowHosts);
    if (this.allowed.size > 0 || options.ca !== undefined) {
      // Production never sets these: say so loudly wherever they are on.
      options.log.warn(
        { allowHosts: this.allowed.list(), extraCa: options.ca !== undefined },
        "outbound.test_override.enabled",
      );
    }
    this.agent = new Agent({
      connect: {
        lookup: guardedLookup(options.resolve ?? systemResolve, this.allowed),
        ...(options.ca === undefined ? {} : { ca: [...rootCertificates, options.ca] }),
      },
      headersTimeout: this.opts.timeoutMs,
      bodyTimeout: this.opts.timeoutMs,
      connectTimeout: this.opts.timeoutMs,
    });
    this.queue = fastq.promise((message: OutboundMessage) => this.attemptAll(message), this.opts.concurrency);
  }

  /**
   * Queues one delivery and resolves with its outcome. Returns at once; when the queue is full or
   * closing, the outcome is `skipped` with the reason. The caller may await it or record it later.
   */
  deliver(message: OutboundMessage): Promise<DeliveryOutcome> {
    if (this.closed) return Promise.resolve(skipped("the delivery was not attempted: the service is stopping"));
    if (this.queue.length() >= this.opts.queueLimit) {
      this.opts.log.warn({ host: hostOf(message.url), queued: this.queue.length() }, "outbound.queue.full");
      return Promise.resolve(skipped(`the delivery was not attempted: ${this.opts.queueLimit} deliveries are already waiting`));
    }
    return this.queue.push(message);
  }

  stats(): OutboundStats {
    return { running: this.queue.running(), queued: this.queue.length() };
  }

  /** Resolves once nothing is queued or in flight. */
  idle(): Promise<void> {
    return this.queue.drained();
  }

  /** Stops taking deliveries, lets queued ones finish for `closeTimeoutMs`, then aborts the rest. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const waited = new AbortController();
    await Promise.race([this.queue.drained(), sleep(this.opts.closeTimeoutMs, undefined, { signal: waited.signal }).catch(() => undefined)]);
    waited.abort();
    this.stopping.abort();
    await this.queue.drained();
    await this.agent.close();
  }

  private async attemptAll(message: OutboundMessage): Promise<DeliveryOutcome> {
    const started = this.opts.clock.now().getTime();
    const duration = () => Math.max(0, this.opts.clock.now().getTime() - started);
    const preflight = this.preflight(message.url);
    if (preflight !== null) return { status: "failed", httpStatus: null, error: preflight, attempts: 1, durationMs: duration() };
    // Called on the module: `timeouts` reads its helpers from `this`.
    const delays = retry.timeouts({
      retries: this.opts.retries,
      factor: 2,
      minTimeout: this.opts.retryDelayMs,
      maxTimeout: this.opts.maxRetryDelayMs,
      randomize: true,
    });
    let attempts = 0;
    for (;;) {
      attempts++;
      const result = await this.attemptOnce(message);
      if (result.ok) return { status: "sent", httpStatus: result.httpStatus, error: null, attempts, durationMs: duration() };
      const delay = delays[attempts - 1];
      if (!result.retryable || delay === undefined || this.stopping.signal.aborted) {
        this.opts.log.info(
          { host: hostOf(message.url), httpStatus: result.httpStatus, attempts, reason: result.error },
          "outbound.delivery.failed",
        );
        const error = attempts > 1 ? `${result.error} (after ${attempts} attempts)` : result.error;
        return { status: "failed", httpStatus: result.httpStatus, error, attempts, durationMs: duration() };
      }
      const wait = Math.min(Math.max(delay, result.retryAfterMs ?? 0), this.opts.maxRetryDelayMs);
      await sleep(wait, undefined, { signal: this.stopping.signal }).catch(() => undefined);
    }
  }

  /** The saved-target rules again, and an IP literal's range (a socket to an address asks no lookup). */
  private preflight(url: string): string | null {
    const problem = targetUrlProblem(url, this.allowed);
    if (problem !== null) return `the target ${problem}`;
    const host = new URL(url).hostname;
    if (!isIpLiteral(host)) return null;
    const range = refusedRange(host, host.replace(/^\[|\]$/g, ""), this.allowed);
    return range === null ? null : new RefusedAddressError(range).message;
  }

  private async attemptOnce(message: OutboundMessage): Promise<AttemptResult> {
    const headers: Record<string, string> = {
      ...message.headers,
      "content-type": message.contentType ?? "application/json",
      "user-agent": this.opts.userAgent,
    };
    if (message.signingSecret !== undefined) {
      headers[SIGNATURE_HEADER] = signatureHeaderValue(message.signingSecret, message.body, this.opts.clock.now().getTime() / 1000);
    }
    const timeout = AbortSignal.timeout(this.opts.timeoutMs);
    try {
      const response = await request(message.url, {
        method: "POST",
        headers,
        body: message.body,
        dispatcher: this.agent,
        signal: AbortSignal.any([timeout, this.stopping.signal]),
      });
      // Drained unread: nothing a receiver says reaches an outcome, a log or a caller.
      response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      if (response.statusCode >= 200 && response.statusCode < 300) return { ok: true, httpStatus: response.statusCode };
      const retryAfter = response.headers["retry-after"];
      return { ok: false, ...statusFailure(response.statusCode, typeof retryAfter === "string" ? retryAfter : undefined) };
    } catch (err) {
      if (this.stopping.signal.aborted) {
        return { ok: false, error: "the delivery was stopped: the service is stopping", httpStatus: null, retryable: false };
      }
      return { ok: false, ...connectionFailure(err, timeout.aborted, this.opts.timeoutMs) };
    }
  }
}

function skipped(error: string): DeliveryOutcome {
  return { status: "skipped", httpStatus: null, error, attempts: 0, durationMs: 0 };
}

/** Only the host of a target is ever logged: a hook URL's path can itself be a secret. */
function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return "(unparseable)";
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
