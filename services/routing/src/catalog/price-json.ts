import { toUsd, type Nanodollars } from "@router/money";
import type { EndpointPrice } from "./catalog-store";

/** The price as the catalog routes show it: USD per token as decimal strings, plus USD per million. */
export interface PriceJson {
  prompt: string;
  completion: string;
  /** Present when cached prompt tokens have their own price. */
  input_cache_read?: string;
  /** Present when cache writes have their own price (OpenRouter's name: the 5-minute write). */
  input_cache_write?: string;
  input_cache_write_1h?: string;
  prompt_per_million: number;
  completion_per_million: number;
}

export function priceJson(price: EndpointPrice): PriceJson {
  const out: PriceJson = {
    prompt: usdPerToken(price.promptPerMillion),
    completion: usdPerToken(price.completionPerMillion),
    prompt_per_million: toUsd(price.promptPerMillion),
    completion_per_million: toUsd(price.completionPerMillion),
  };
  if (price.cachedPromptPerMillion !== null) out.input_cache_read = usdPerToken(price.cachedPromptPerMillion);
  if (price.cacheWrite5mPerMillion !== null) out.input_cache_write = usdPerToken(price.cacheWrite5mPerMillion);
  if (price.cacheWrite1hPerMillion !== null) out.input_cache_write_1h = usdPerToken(price.cacheWrite1hPerMillion);
  return out;
}

// Nanodollars per million tokens are 1e-15 USD per token, so the exact decimal is the integer
// shifted fifteen places; no float ever touches it.
const SHIFT = 15;

/** `2500000000n` (2.5 USD per million) → `"0.0000025"`. */
export function usdPerToken(nanosPerMillion: Nanodollars): string {
  const digits = nanosPerMillion.toString().padStart(SHIFT + 1, "0");
  const whole = digits.slice(0, digits.length - SHIFT);
  const frac = digits.slice(digits.length - SHIFT).replace(/0+$/, "");
  return frac ? `${whole}.${frac}` : whole;
}
