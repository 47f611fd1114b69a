import { toNanos, toUsd } from "@router/money";

/** A stored `requests` row as pg or PGlite return it (bigint columns may arrive as string or number). */
export interface RequestRow {
  id: string;
  org_id: string;
  key_hash: string | null;
  key_name: string | null;
  workspace_id: string | null;
  /** The workspace's name when the request was made; null on rows recorded before events carried it. */
  workspace_name: string | null;
  created_at: Date | string;
  requested_model: string;
  served_model: string | null;
  provider_slug: string | null;
  /** The provider's display name; null on rows recorded before events carried it, and on rows read without the column. */
  provider_name?: string | null;
  endpoint_id: string | null;
  status: string;
  finish_reason: string | null;
  native_finish_reason: string | null;
  is_byok: boolean;
  is_cache_hit: boolean;
  cancelled: boolean;
  streamed: boolean;
  quantization: string | null;
  ttft_ms: number | null;
  generation_ms: number | null;
  routing_overhead_ms: number | null;
  error_code: string | null;
  error_message: string | null;
  billed_cost_nanodollars: bigint | string | number;
  list_cost_nanodollars: bigint | string | number;
  prompt_tokens: number;
  completion_tokens: number;
  /** Prompt tokens read from the provider's cache. */
  cached_tokens: number;
  /** Prompt tokens written to the provider's cache for 5 minutes / 1 hour; absent on rows read without the columns. */
  cache_write_5m_tokens?: number;
  cache_write_1h_tokens?: number;
  usage_lines: StoredUsageLine[] | string;
  price_version_ids: (bigint | string | number)[] | null;
  app_id: string | null;
  app_title: string | null;
  http_referer: string | null;
  user_agent: string | null;
  agent: string | null;
  session_id: string | null;
  run_id: string | null;
  /** Content-filter labels that matched (jsonb); absent on rows read without the column. */
  content_filter_labels?: string[] | string;
  ingress: string | null;
  /** Built-in tools the serving endpoint could not run (jsonb); absent on rows read without the column. */
  dropped_tools?: string[] | string;
}

export interface StoredUsageLine {
  kind: string;
  tokens: number;
  price_per_million_nanodollars: string;
  cost_nanodollars: string;
  price_version_id: string | null;
}

export function isoOf(v: Date | string): string {
  return new Date(v).toISOString();
}

/**
 * The request record of the product's API (the service README). `total_cost` is the billed amount:
 * Router's fee, also given as `fee`; `list_cost` is what the provider charged at its list price, which
 * the organisation pays the provider on its own key. The summary's `spend` adds up `list_cost` and
 * its `fees` add up `fee`.
 */
export function renderRequestRecord(r: RequestRow) {
  return {
    id: r.id,
    created_at: isoOf(r.created_at),
    requested_model: r.requested_model,
    served_model: r.served_model,
    provider_slug: r.provider_slug,
    status: r.status,
    finish_reason: r.finish_reason,
    native_finish_reason: r.native_finish_reason,
    is_byok: r.is_byok,
    is_cache_hit: r.is_cache_hit,
    cancelled: r.cancelled,
    streamed: r.streamed,
    quantization: r.quantization,
    ttft_ms: r.ttft_ms,
    generation_ms: r.generation_ms,
    routing_overhead_ms: r.routing_overhead_ms,
    error_code: r.error_code,
    error_message: r.error_message,
    total_cost: toUsd(toNanos(r.billed_cost_nanodollars)),
    list_cost: toUsd(toNanos(r.list_cost_nanodollars)),
    fee: toUsd(toNanos(r.billed_cost_nanodollars)),
    app_id: r.app_id,
    app_title: r.app_title,
    http_referer: r.http_referer,
    workspace_id: r.workspace_id,
    agent: r.agent,
    // Requests recorded before the gateway named its ingress all came in by chat completions.
    ingress: r.ingress ?? "chat_completions",
  };
}

export function renderUsageLines(r: RequestRow) {
  const lines = typeof r.usage_lines === "string" ? (JSON.parse(r.usage_lines) as StoredUsageLine[]) : r.usage_lines;
  return lines.map((l) => {
    const price = toNanos(l.price_per_million_nanodollars);
    const cost = toNanos(l.cost_nanodollars);
    return {
      kind: l.kind,
      tokens: l.tokens,
      price_per_million: toUsd(price),
      price_per_million_nanodollars: price.toString(),
      cost: toUsd(cost),
      cost_nanodollars: cost.toString(),
      price_version_id: l.price_version_id === null ? null : Number(l.price_version_id),
    };
  });
}

export function priceVersionIdsOf(r: RequestRow): number[] {
  return (r.price_version_ids ?? []).map((v) => Number(v));
}

export function droppedToolsOf(r: RequestRow): string[] {
  const tools = r.dropped_tools ?? [];
  return typeof tools === "string" ? (JSON.parse(tools) as string[]) : tools;
}

export function contentFilterLabelsOf(r: RequestRow): string[] {
  const labels = r.content_filter_labels ?? [];
  return typeof labels === "string" ? (JSON.parse(labels) as string[]) : labels;
}

/** Prompt tokens read from and written to the provider's cache (subsets of the prompt tokens). */
export function cacheTokensOf(r: RequestRow) {
  return {
    cache_read_tokens: r.cached_tokens,
    cache_write_5m_tokens: r.cache_write_5m_tokens ?? 0,
    cache_write_1h_tokens: r.cache_write_1h_tokens ?? 0,
  };
}
