import { z } from "zod";

/**
 * The chat request's settings with the bounds the chat route puts on them, shared by the gateway
 * (which validates chat requests) and routing (which validates the presets that fill them in), so a
 * preset can never hold a value the chat route would refuse.
 */

export const SORTS = ["price", "throughput", "latency"] as const;
export const ROUTING_STABILITIES = ["adaptive", "sticky", "pinned"] as const;

const slugList = z.array(z.string().min(1)).max(64);

// A million dollars per million tokens bounds every real price (and keeps nanodollars in int64).
const usdPerMillion = z.number().min(0).max(1_000_000);

/** `provider`: routing preferences and constraints; `max_price` in USD per million tokens. */
export const providerPreferencesSchema = z.object({
  order: slugList.optional(),
  only: slugList.optional(),
  ignore: slugList.optional(),
  allow_fallbacks: z.boolean().optional(),
  require_parameters: z.boolean().optional(),
  data_collection: z.enum(["allow", "deny"]).optional(),
  zdr: z.boolean().optional(),
  sort: z.enum(SORTS).optional(),
  quantizations: slugList.optional(),
  max_price: z
    .object({ prompt: usdPerMillion.optional(), completion: usdPerMillion.optional() })
    .optional(),
});

/** `reasoning`: an effort or a token budget, not both. */
export const reasoningSchema = z
  .object({
    effort: z.enum(["low", "medium", "high"]).optional(),
    max_tokens: z.number().int().min(1).optional(),
    exclude: z.boolean().optional(),
    enabled: z.boolean().optional(),
  })
  .refine((r) => r.effort === undefined || r.max_tokens === undefined, {
    message: "give either effort or max_tokens, not both",
  });

/** A completion bound (`max_tokens`, `max_completion_tokens`). */
export const tokenCount = z.number().int().min(1).max(10_000_000);

/** The sampling settings a preset may also hold. */
export const samplingSettings = {
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  seed: z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).optional(),
};
