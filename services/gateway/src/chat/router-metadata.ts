import { toUsd } from "@router/money";
import type { routing } from "@router/proto";
import type { Attempt, CascadeResult, Candidate, Skip } from "../dispatch/types";
import type { ChatContext } from "./chat-context";
import { effectivePrices } from "../spend/usage-cost";

export interface MetadataInput {
  id: string;
  requested: string;
  models: string[];
  plan: routing.PlanResponse;
  attempts: Attempt[];
  skipped: Skip[];
  served: Candidate | null;
  routingOverheadMs: number | null;
}

/** `router_metadata`: why this model, this provider and this price. */
export function routerMetadata(m: MetadataInput): Record<string, unknown> {
  const s = m.served;
  const price = s?.price;
  const prices = s && price ? effectivePrices(s) : null;
  return {
    generation_id: m.id,
    requested: m.requested,
    models: m.models,
    strategy: m.plan.strategy || (m.models.length ? "fallback" : "direct"),
    cascade_size: m.plan.cascade.length,
    beyond_fallback_depth: m.plan.beyondFallbackDepth,
    unresolved_models: m.plan.unresolvedModels,
    ordering: m.plan.ordering || "deterministic",
    sort: m.plan.sort || null,
    routing_seed: m.plan.routingSeed || null,
    preset: m.plan.preset ? { reference: `@preset/${m.plan.preset.slug}`, version: m.plan.preset.version } : null,
    sticky: stickyMetadata(m.plan.sticky),
    served: s
      ? {
          model: s.modelId,
          provider: s.providerSlug,
          endpoint_id: s.endpointId,
          upstream_model: s.upstreamModel,
          quantization: s.quantization || null,
          model_rank: s.modelRank,
          fallback: s.modelRank > 1 || m.attempts.length > 1,
        }
      : null,
    pricing: prices
      ? {
          prompt_per_million: toUsd(prices.prompt),
          completion_per_million: toUsd(prices.completion),
          cached_prompt_per_million: toUsd(prices.cached_prompt),
          cache_write_5m_per_million: toUsd(prices.cache_write_5m),
          cache_write_1h_per_million: toUsd(prices.cache_write_1h),
          price_version_id: Number(price?.priceVersionId),
        }
      : null,
    is_byok: true,
    attempts: m.attempts.map((a) => ({
      attempt: a.attempt,
      model: a.candidate.modelId,
      provider: a.candidate.providerSlug,
      endpoint_id: a.candidate.endpointId,
      status: a.status,
      http_status: a.httpStatus,
      error_code: a.errorCode,
      error_message: a.errorMessage,
      duration_ms: a.durationMs,
      ttft_ms: a.ttftMs,
      circuit_open: a.circuitOpen,
    })),
    skipped: m.skipped.map((k) => ({
      model: k.candidate.modelId,
      provider: k.candidate.providerSlug,
      endpoint_id: k.candidate.endpointId,
      reason: k.reason,
    })),
    routing_overhead_ms: m.routingOverheadMs,
  };
}

function stickyMetadata(sticky: routing.Sticky | undefined): Record<string, unknown> | null {
  if (!sticky?.mode) return null;
  return {
    mode: sticky.mode,
    source: sticky.source,
    pins: sticky.pins.map((p) => ({
      model: p.modelId,
      endpoint_id: p.endpointId,
      hoisted: p.hoisted,
      not_hoisted_reason: p.notHoistedReason || null,
    })),
  };
}

/** The request's `router_metadata`, when the client asked for it and routing answered; else null. */
export function requestMetadata(
  ctx: ChatContext,
  result: CascadeResult | null,
  overheadMs: number | null,
): Record<string, unknown> | null {
  if (!ctx.headers.metadata || !ctx.plan) return null;
  return routerMetadata({
    id: ctx.id,
    requested: ctx.request.model ?? "",
    models: ctx.request.models ?? [],
    plan: ctx.plan,
    attempts: result?.attempts ?? [],
    skipped: result?.skipped ?? [],
    served: result?.served?.candidate ?? null,
    routingOverheadMs: overheadMs === null ? null : Math.round(overheadMs),
  });
}
