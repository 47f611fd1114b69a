import { once } from "node:events";
import type Redis from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type IRateLimiterOptions, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { Logger } from "@router/logging";
import type { RateWindow } from "./limits";

/** How often a Redis that failed is asked whether it answers again. */
const PROBE_MS = 2_000;

/** What one request's count came to under a limit. */
export interface RateDecision {
  allowed: boolean;
  /** The binding window: the one that refused, else the one with the fewest requests left. */
  window: RateWindow;
  /** Requests left in that window (0 once refused). */
  remaining: number;
  /** Milliseconds until that window resets. */
  resetMs: number;
}

/**
 * The in-memory limiter that stands in for Redis while Redis cannot answer (rate-limiter-flexible's
 * `insuranceLimiter`). It counts per instance; `onUse` tells the store it is in use.
 */
class InsuranceLimiter extends RateLimiterMemory {
  constructor(
    opts: IRateLimiterOptions,
    private readonly onUse: () => void,
  ) {
    super(opts);
  }

  override consume(key: string | number, pointsToConsume?: number, options?: { [key: string]: unknown }): Promise<RateLimiterRes> {
    this.onUse();
    return super.consume(key, pointsToConsume, options);
  }
}

/**
 * One limit with one or more fixed windows (a minute and a day), each a rate-limiter-flexible
 * limiter on the store. A request must fit every window; the windows are counted shortest first,
 * and a request one window refuses is not counted in the longer ones, so a client refused by the
 * minute does not also spend its day.
 */
export class WindowedLimiter {
  private failing = false;

  constructor(
    readonly name: string,
    private readonly windows: ReadonlyArray<{ window: RateWindow; limiter: RateLimiterAbstract }>,
    private readonly log: Logger,
  ) {}

  /**
   * Counts one request of `subject`. Resolves `undefined` only when the store and its insurance
   * both failed: the request is then let through (a limiter must never turn into an outage).
   */
  async consume(subject: string): Promise<RateDecision | undefined> {
    let binding: RateDecision | undefined;
    for (const { window, limiter } of this.windows) {
      let res: RateLimiterRes;
      try {
        res = await limiter.consume(subject);
      } catch (err) {
        if (err instanceof RateLimiterRes) {
          return { allowed: false, window, remaining: 0, resetMs: Math.max(err.msBeforeNext, 0) };
        }
        if (!this.failing) this.log.error({ err, limit: this.name }, "gateway.rate_limits.count_failed");
        this.failing = true;
        return undefined;
      }
      this.failing = false;
      const decision = { allowed: true, window, remaining: res.remainingPoints, resetMs: Math.max(res.msBeforeNext, 0) };
      if (
        !binding ||
        decision.remaining < binding.remaining ||
        (decision.remaining === binding.remaining && decision.resetMs > binding.resetMs)
      ) {
        binding = decision;
      }
    }
    return binding;
  }
}

export interface RateLimitStoreOptions {
  /**
   * A Redis connection for the rate limits alone (set `commandTimeout` on it: a command that takes
   * longer falls back to memory). Unset: every limit counts in this instance's memory.
   */
  redis?: Redis;
  /** Namespaces every Redis key (`<prefix>:<limit>:<seconds>s:<subject>`): installs or test runs sharing one Redis. */
  keyPrefix: string;
  log: Logger;
}

/**
 * Where the limits count: Redis (shared by every gateway instance on it) or this instance's
 * memory. On Redis, each window has an in-memory insurance limiter that counts while Redis is
 * unreachable or slow: requests keep being limited, per instance, instead of failing. The outage
 * is logged once, and its end once.
 */
export class RateLimitStore {
  readonly kind: "redis" | "memory";
  private degraded = false;
  private probe: NodeJS.Timeout | undefined;

  constructor(private readonly opts: RateLimitStoreOptions) {
    this.kind = opts.redis ? "redis" : "memory";
    // Every error also shows as a failed count or a failed probe; the outage is logged once there.
    opts.redis?.on("error", (err: unknown) => this.degrade(err));
  }

  /** True while the counts are shared with other instances: on Redis, and Redis answering. */
  get shared(): boolean {
    return this.kind === "redis" && !this.degraded;
  }

  /**
   * Waits up to `timeoutMs` for the Redis connection, so the first requests count in Redis
   * rather than in the insurance limiter. Resolves either way.
   */
  async ready(timeoutMs: number): Promise<void> {
    const redis = this.opts.redis;
    if (!redis || redis.status === "ready") return;
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), timeoutMs);
    try {
      await once(redis, "ready", { signal: ac.signal });
    } catch {
      this.degrade(new Error(`Redis not ready after ${timeoutMs} ms`));
    } finally {
      clearTimeout(timer);
    }
  }

  /** A limit named `name` with these windows. */
  limiter(name: string, windows: readonly RateWindow[]): WindowedLimiter {
    const sorted = [...windows].sort((a, b) => a.seconds - b.seconds);
    return new WindowedLimiter(
      name,
      sorted.map((window) => ({ window, limiter: this.windowLimiter(name, window) })),
      this.opts.log,
    );
  }

  /** Stops the recovery probe (the Redis connection belongs to the caller). */
  close(): void {
    clearInterval(this.probe);
    this.probe = undefined;
  }

  private windowLimiter(name: string, window: RateWindow): RateLimiterAbstract {
    const base = { keyPrefix: `${this.opts.keyPrefix}:${name}:${window.seconds}s`, points: window.points, duration: window.seconds };
    if (!this.opts.redis) return new RateLimiterMemory(base);
    return new RateLimiterRedis({
      ...base,
      storeClient: this.opts.redis,
      // Not connected (starting, reconnecting): straight to the insurance limiter, no waiting.
      rejectIfRedisNotReady: true,
      // Once a subject is past the limit, this instance refuses it until the window ends without
      // asking Redis again (the count there is already over).
      inMemoryBlockOnConsumed: window.points + 1,
      insuranceLimiter: new InsuranceLimiter(base, () => this.degrade(new Error("Redis did not answer a rate limit count"))),
    });
  }

  /**
   * Redis failed: logged once, then probed every few seconds until it answers again (a slow
   * Redis can fail counts without ever dropping the connection, so no connection event says so).
   */
  private degrade(err: unknown): void {
    if (this.degraded) return;
    this.degraded = true;
    this.opts.log.warn(
      { err },
      "gateway.rate_limits.redis_unavailable: counting in this instance's memory until Redis answers (limits are per instance meanwhile)",
    );
    this.probe = setInterval(() => {
      this.opts.redis?.ping().then(
        () => this.restore(),
        () => undefined, // Still away: the next probe tries again.
      );
    }, PROBE_MS);
    this.probe.unref();
  }

  private restore(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.close();
    this.opts.log.info("gateway.rate_limits.redis_restored");
  }
}
