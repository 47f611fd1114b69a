import { toNanos, toUsd } from "@router/money";
import { droppedToolsOf, isoOf, priceVersionIdsOf, renderUsageLines, type RequestRow } from "./request-row";

/**
 * The generation record of the product's API (the service README): pricing detail of one completion, metadata only.
 * `provider_name` is the catalog's display name the gateway's event carried (the slug on rows from
 * before it did). `total_cost` is the billed amount (Router's fee, also `fee`); `list_cost` what the
 * provider charged at its list price.
 */
export function renderGenerationRecord(r: RequestRow) {
  return {
    id: r.id,
    model: r.served_model,
    provider_name: r.provider_name ?? r.provider_slug,
    endpoint_id: r.endpoint_id,
    quantization: r.quantization,
    total_cost: toUsd(toNanos(r.billed_cost_nanodollars)),
    list_cost: toUsd(toNanos(r.list_cost_nanodollars)),
    fee: toUsd(toNanos(r.billed_cost_nanodollars)),
    finish_reason: r.finish_reason,
    native_finish_reason: r.native_finish_reason,
    streamed: r.streamed,
    cancelled: r.cancelled,
    is_byok: r.is_byok,
    latency: r.ttft_ms,
    generation_time: r.generation_ms,
    tokens_prompt: r.prompt_tokens,
    tokens_completion: r.completion_tokens,
    // Subsets of tokens_prompt, priced apart in usage_lines (cached_prompt, cache_write_5m, cache_write_1h).
    tokens_cached: r.cached_tokens,
    tokens_cache_write_5m: r.cache_write_5m_tokens ?? 0,
    tokens_cache_write_1h: r.cache_write_1h_tokens ?? 0,
    is_cache_hit: r.is_cache_hit,
    price_version_ids: priceVersionIdsOf(r),
    usage_lines: renderUsageLines(r),
    app_id: r.app_id,
    app_title: r.app_title,
    http_referer: r.http_referer,
    user_agent: r.user_agent,
    dropped_tools: droppedToolsOf(r),
    created_at: isoOf(r.created_at),
  };
}
