import type { RankedEndpoint } from "../catalog/catalog-snapshot";
import type { Sort } from "./ranking";

export const VARIANTS = ["free", "nitro", "floor", "exacto"] as const;
export type Variant = (typeof VARIANTS)[number];

/**
 * What each model variant suffix does (docs/adr, ADR 0027, "Variants"):
 * - `:free` keeps only endpoints that charge nothing (prompt and completion price 0);
 * - `:floor` orders the model's endpoints by price, cheapest first (deterministic);
 * - `:nitro` orders them by measured throughput, fastest first (deterministic);
 * - `:exacto` keeps endpoints that list `tools` and do not serve a 4-bit-or-smaller quantization,
 *   the hosts most likely to produce well-formed tool calls; they are then ranked as usual.
 */
export interface VariantRule {
  /** The constraint an endpoint fails, as recorded in `refused` and `unsatisfied_filters`. */
  constraint?: string;
  admits?(r: RankedEndpoint): boolean;
  sort?: Sort;
}

// 4-bit and smaller weights (int4, fp4, mxfp4, nf4, GGUF q2..q4 kinds) lose tool-call accuracy.
const LOW_PRECISION = /^(int[1-4]|fp[1-4]|mxfp4|nf4|q[1-4](_.*)?)$/i;

export const VARIANT_RULES: Record<Variant, VariantRule> = {
  free: {
    constraint: "variant:free",
    admits: ({ endpoint: { price } }) => price.promptPerMillion === 0n && price.completionPerMillion === 0n,
  },
  floor: { sort: "price" },
  nitro: { sort: "throughput" },
  exacto: {
    constraint: "variant:exacto",
    admits: ({ endpoint }) =>
      endpoint.supportedParameters.includes("tools") && !LOW_PRECISION.test(endpoint.quantization ?? ""),
  },
};
