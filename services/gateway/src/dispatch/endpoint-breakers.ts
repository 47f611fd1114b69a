import CircuitBreaker from "opossum";
import { AttemptFailure } from "./attempt-failure";

export interface BreakerOptions {
  /** Failure percentage within the rolling window that opens the circuit. */
  errorThresholdPercentage: number;
  /** Calls in the rolling window before the percentage is judged. */
  volumeThreshold: number;
  /** How long an open circuit stays open before one trial call. */
  resetTimeoutMs: number;
  /** Length of the rolling statistics window. */
  rollingCountTimeoutMs: number;
}

export const DEFAULT_BREAKER_OPTIONS: BreakerOptions = {
  errorThresholdPercentage: 50,
  volumeThreshold: 5,
  resetTimeoutMs: 30_000,
  rollingCountTimeoutMs: 60_000,
};

type Action = () => Promise<unknown>;

/** Told when an endpoint's circuit opens (`true`) or closes again (`false`); half-open stays open. */
export type CircuitListener = (endpointId: string, open: boolean) => void;

/**
 * One opossum circuit breaker per endpoint, shared by every organisation. Only failures that say
 * the endpoint is unhealthy count (5xx, timeouts, broken connections); a provider's 4xx for one
 * caller's request or credential does not.
 */
export class EndpointBreakers {
  private readonly breakers = new Map<string, CircuitBreaker<[Action], unknown>>();
  private readonly open = new Set<string>();
  private readonly options: BreakerOptions;

  constructor(
    options: Partial<BreakerOptions> = {},
    private readonly onChange?: CircuitListener,
  ) {
    this.options = { ...DEFAULT_BREAKER_OPTIONS, ...options };
  }

  private breaker(endpointId: string): CircuitBreaker<[Action], unknown> {
    let b = this.breakers.get(endpointId);
    if (!b) {
      b = new CircuitBreaker<[Action], unknown>((action: Action) => action(), {
        timeout: false,
        errorThresholdPercentage: this.options.errorThresholdPercentage,
        volumeThreshold: this.options.volumeThreshold,
        resetTimeout: this.options.resetTimeoutMs,
        rollingCountTimeout: this.options.rollingCountTimeoutMs,
        errorFilter: (err: unknown) => !(err instanceof AttemptFailure) || !err.countsAgainstEndpoint,
      });
      const listener = this.onChange;
      b.on("open", () => {
        this.open.add(endpointId);
        listener?.(endpointId, true);
      });
      b.on("close", () => {
        this.open.delete(endpointId);
        listener?.(endpointId, false);
      });
      this.breakers.set(endpointId, b);
    }
    return b;
  }

  /** Whether calls to the endpoint are being refused right now (half-open lets a trial through). */
  isOpen(endpointId: string): boolean {
    const b = this.breakers.get(endpointId);
    return b ? b.opened : false;
  }

  /** Endpoints whose circuit is open or half-open (routing leaves a `sticky` pin on them in place). */
  openEndpoints(): string[] {
    return this.open.size === 0 ? [] : [...this.open];
  }

  /**
   * Runs `action` through the endpoint's breaker. Rejects with `BreakerOpen` when it refuses, unless
   * `regardless` (panic mode: nothing else is left to try): then the action runs, and a success
   * closes the circuit, since the endpoint has answered again.
   */
  async run<T>(endpointId: string, action: () => Promise<T>, opts: { regardless?: boolean } = {}): Promise<T> {
    const b = this.breakers.get(endpointId);
    if (opts.regardless && b?.opened) {
      const result = await action();
      b.close();
      return result;
    }
    try {
      return (await this.breaker(endpointId).fire(action)) as T;
    } catch (err) {
      if ((err as { code?: string }).code === "EOPENBREAKER") throw new BreakerOpen(endpointId);
      throw err;
    }
  }

  shutdown(): void {
    for (const b of this.breakers.values()) b.shutdown();
    this.breakers.clear();
    this.open.clear();
  }
}

export class BreakerOpen extends Error {
  constructor(readonly endpointId: string) {
    super(`circuit open for ${endpointId}`);
    this.name = "BreakerOpen";
  }
}
