import type { ServerResponse } from "node:http";
import { DomainError } from "@router/errors";
import { toUsd, type Nanodollars } from "@router/money";
import type { CreditStanding } from "../spend/credit-standing";
import { windowName, type RateWindow } from "./limits";
import type { RateLimitStore, WindowedLimiter } from "./rate-limiter";

/** One request-rate tier: organisations whose lifetime credit purchase is at least `purchased` get `windows`. */
export interface RateTier {
  purchased: Nanodollars;
  windows: readonly RateWindow[];
}

export interface InferenceRateTiersDeps {
  store: RateLimitStore;
  /** Lowest purchase first; the first is 0 (every organisation has a tier). */
  tiers: readonly RateTier[];
  credits: Pick<CreditStanding, "purchased">;
  /** Called on every refusal (the metrics counter). */
  onRefused?: () => void;
}

/** The name of the limit in messages, metrics and Redis keys. */
export const INFERENCE_LIMIT = "inference";

/** Whole seconds, at least 1. */
const seconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/**
 * Request-rate ceilings on inference by lifetime credit purchase (the spec: they follow what an
 * organisation ever bought, not its balance, so topping up raises the ceiling and spending never
 * lowers it). Counted per organisation in the rate-limit store (Redis, shared by every gateway;
 * memory in the one-process default). On Redis every tier counts in the same keys per window length,
 * so an organisation that moves up keeps its count and simply has more room; in memory its count
 * starts again in the new tier. Either way a top-up only ever gives more room.
 */
export class InferenceRateTiers {
  private readonly limiters: Array<{ tier: RateTier; limiter: WindowedLimiter }>;

  constructor(private readonly deps: InferenceRateTiersDeps) {
    this.limiters = deps.tiers.map((tier) => ({ tier, limiter: deps.store.limiter(INFERENCE_LIMIT, tier.windows) }));
  }

  /**
   * Counts one inference request of `orgId`; throws the 429 (with `Retry-After` and the
   * `X-RateLimit-*` headers) past its tier's ceiling. An organisation whose purchase the ledger
   * cannot say, or a store that cannot count, is let through (a limiter never turns into an outage).
   */
  async admit(orgId: string, res: ServerResponse): Promise<void> {
    const purchased = await this.deps.credits.purchased(orgId);
    if (purchased === null) return;
    const at = this.tierOf(purchased);
    if (!at) return;
    const decision = await at.limiter.consume(`org:${orgId}`);
    if (!decision) return;
    res.setHeader("X-RateLimit-Limit", String(decision.window.points));
    res.setHeader("X-RateLimit-Remaining", String(decision.remaining));
    res.setHeader("X-RateLimit-Reset", String(seconds(decision.resetMs)));
    if (decision.allowed) return;
    const retryAfter = seconds(decision.resetMs);
    res.setHeader("Retry-After", String(retryAfter));
    this.deps.onRefused?.();
    const requests = decision.window.points === 1 ? "1 request" : `${decision.window.points} requests`;
    throw new DomainError(
      "rate_limited",
      `inference rate limit: ${requests} per ${windowName(decision.window.seconds)} per organisation, the tier of ${toUsd(at.tier.purchased)} USD of lifetime credit purchase; buying credits raises it`,
      {
        details: {
          limit: INFERENCE_LIMIT,
          window: windowName(decision.window.seconds),
          max_requests: decision.window.points,
          retry_after_seconds: retryAfter,
          tier_purchased: toUsd(at.tier.purchased),
        },
      },
    );
  }

  private tierOf(purchased: Nanodollars): { tier: RateTier; limiter: WindowedLimiter } | undefined {
    let found: { tier: RateTier; limiter: WindowedLimiter } | undefined;
    for (const entry of this.limiters) if (purchased >= entry.tier.purchased) found = entry;
    return found;
  }
}
