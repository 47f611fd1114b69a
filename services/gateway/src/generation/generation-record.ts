import { toUsd } from "@router/money";
import type { events } from "@router/proto";

/**
 * The generation record (`GET /v1/generation?id=`): per-request pricing detail, no content. The
 * same shape as activity renders from its stored row, so a caller sees one record whichever
 * serves it.
 */
export interface GenerationRecord {
  id: string;
  model: string | null;
  provider_name: string | null;
  endpoint_id: string | null;
  quantization: string | null;
  total_cost: number;
  /** What the provider charged at its list price (the organisation pays it on its own key). */
  list_cost: number;
  /** Router's fee: the billed amount, as total_cost. */
  fee: number;
  finish_reason: string | null;
  native_finish_reason: string | null;
  streamed: boolean;
  cancelled: boolean;
  is_byok: boolean;
  latency: number | null;
  generation_time: number | null;
  tokens_prompt: number;
  tokens_completion: number;
  /** Prompt tokens read from / written to the provider's cache (subsets of tokens_prompt). */
  tokens_cached: number;
  tokens_cache_write_5m: number;
  tokens_cache_write_1h: number;
  /** True when any prompt token was read from the cache. */
  is_cache_hit: boolean;
  price_version_ids: number[];
  usage_lines: {
    kind: string;
    tokens: number;
    price_per_million: number;
    price_per_million_nanodollars: string;
    cost: number;
    cost_nanodollars: string;
    price_version_id: number | null;
  }[];
  app_id: string | null;
  app_title: string | null;
  http_referer: string | null;
  user_agent: string | null;
  /** Built-in tools the serving endpoint could not run, left out of the request it was sent. */
  dropped_tools: string[];
  created_at: string;
}

const orNull = (s: string): string | null => (s === "" ? null : s);

/** The record projected from the completion event, as activity will serve it once it has the row. */
export function generationRecordOf(e: events.RequestCompleted): GenerationRecord {
  return {
    id: e.requestId,
    model: orNull(e.servedModel),
    // The catalog's display name; an event of a gateway from before it was carried has only the slug.
    provider_name: orNull(e.providerName) ?? orNull(e.providerSlug),
    endpoint_id: orNull(e.endpointId),
    quantization: orNull(e.quantization),
    total_cost: toUsd(e.billedCostNanodollars),
    list_cost: toUsd(e.listCostNanodollars),
    fee: toUsd(e.billedCostNanodollars),
    finish_reason: orNull(e.finishReason),
    native_finish_reason: orNull(e.nativeFinishReason),
    streamed: e.streamed,
    cancelled: e.cancelled,
    is_byok: e.isByok,
    latency: e.ttftMs ?? null,
    generation_time: e.generationMs ?? null,
    tokens_prompt: e.usage?.promptTokens ?? 0,
    tokens_completion: e.usage?.completionTokens ?? 0,
    tokens_cached: e.usage?.cachedTokens ?? 0,
    tokens_cache_write_5m: e.usage?.cacheWrite5mTokens ?? 0,
    tokens_cache_write_1h: e.usage?.cacheWrite1hTokens ?? 0,
    is_cache_hit: e.isCacheHit,
    price_version_ids: e.priceVersionIds.map(Number),
    usage_lines: e.usageLines.map((l) => ({
      kind: l.kind,
      tokens: l.tokens,
      price_per_million: toUsd(l.pricePerMillionNanodollars),
      price_per_million_nanodollars: l.pricePerMillionNanodollars.toString(),
      cost: toUsd(l.costNanodollars),
      cost_nanodollars: l.costNanodollars.toString(),
      price_version_id: l.priceVersionId === 0n ? null : Number(l.priceVersionId),
    })),
    app_id: orNull(e.appId),
    app_title: orNull(e.appTitle),
    http_referer: orNull(e.httpReferer),
    user_agent: orNull(e.userAgent),
    dropped_tools: e.droppedTools,
    created_at: new Date(Number(e.createdAtMs)).toISOString(),
  };
}
