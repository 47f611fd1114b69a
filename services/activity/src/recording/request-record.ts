import { createHash } from "node:crypto";
import type { Queryable } from "@router/db";
import type { events } from "@router/proto";

type RequestCompleted = events.RequestCompleted;

/** Proto3 strings default to "": the store keeps absence as null. */
function orNull(s: string): string | null {
  return s === "" ? null : s;
}

/** An attempt without an id still needs a stable one, so a redelivered event maps to the same row. */
function attemptId(requestId: string, attempt: number): string {
  const digest = createHash("sha256").update(`${requestId}#${attempt}`).digest("base64url").slice(0, 22);
  return `att_${digest}`;
}

const REQUEST_COLUMNS = [
  "id",
  "org_id",
  "key_hash",
  "key_name",
  "key_class",
  "workspace_id",
  "workspace_name",
  "created_at",
  "requested_model",
  "served_model",
  "provider_slug",
  "provider_name",
  "endpoint_id",
  "status",
  "finish_reason",
  "native_finish_reason",
  "is_byok",
  "is_cache_hit",
  "cancelled",
  "streamed",
  "quantization",
  "ttft_ms",
  "generation_ms",
  "routing_overhead_ms",
  "error_code",
  "error_message",
  "billed_cost_nanodollars",
  "list_cost_nanodollars",
  "prompt_tokens",
  "completion_tokens",
  "cached_tokens",
  "cache_write_5m_tokens",
  "cache_write_1h_tokens",
  "reasoning_tokens",
  "usage_lines",
  "price_version_ids",
  "app_id",
  "app_title",
  "http_referer",
  "app_hidden",
  "app_categories",
  "user_agent",
  "agent",
  "session_id",
  "run_id",
  "content_filter_labels",
  "ingress",
  "dropped_tools",
] as const;

// Requests, their attempts, the daily totals and the conversations go in one statement per batch of
// events: one round trip and one commit however many arrive together. Rows come in as JSON shaped
// like the tables, so Postgres converts every value to its column's type. Everything after the
// requests insert reads only the requests that were new (`r`), so a redelivery changes nothing.
// The upserts take their rows in key order so that two batches touching the same rows wait for
// each other rather than deadlock.
const RECORD_REQUESTS = `WITH r AS (
  INSERT INTO requests (${REQUEST_COLUMNS.join(", ")})
  SELECT DISTINCT ON (x.id) ${REQUEST_COLUMNS.map((c) => `x.${c}`).join(", ")}
  FROM jsonb_populate_recordset(NULL::requests, $1::jsonb) AS x
  ON CONFLICT (id) DO NOTHING
  RETURNING id, org_id, workspace_id, created_at, error_code, is_byok, list_cost_nanodollars, billed_cost_nanodollars, prompt_tokens,
    completion_tokens, cached_tokens, session_id
), a AS (
  INSERT INTO upstream_attempts (id, request_id, org_id, attempt, created_at, model_id, provider_slug,
    endpoint_id, is_byok, status, http_status, error_code, error_message, duration_ms, ttft_ms)
  SELECT x.id, r.id, r.org_id, x.attempt, x.created_at, x.model_id, x.provider_slug, x.endpoint_id, x.is_byok,
    x.status, x.http_status, x.error_code, x.error_message, x.duration_ms, x.ttft_ms
  FROM r JOIN jsonb_populate_recordset(NULL::upstream_attempts, $2::jsonb) AS x ON x.request_id = r.id
  ON CONFLICT DO NOTHING
), d AS (
  INSERT INTO daily_totals AS t (org_id, workspace_key, day, requests, errors, byok_requests, spend_nanodollars,
    fee_nanodollars, prompt_tokens, completion_tokens, cached_tokens)
  SELECT org_id, coalesce(workspace_id, ''), (created_at AT TIME ZONE 'UTC')::date, count(*),
    count(*) FILTER (WHERE error_code IS NOT NULL), count(*) FILTER (WHERE is_byok), sum(list_cost_nanodollars),
    sum(billed_cost_nanodollars), sum(prompt_tokens), sum(completion_tokens), sum(cached_tokens)
  FROM r GROUP BY 1, 2, 3 ORDER BY 1, 3, 2
  ON CONFLICT (org_id, day, workspace_key) DO UPDATE SET
    requests = t.requests + EXCLUDED.requests,
    errors = t.errors + EXCLUDED.errors,
    byok_requests = t.byok_requests + EXCLUDED.byok_requests,
    spend_nanodollars = t.spend_nanodollars + EXCLUDED.spend_nanodollars,
    fee_nanodollars = t.fee_nanodollars + EXCLUDED.fee_nanodollars,
    prompt_tokens = t.prompt_tokens + EXCLUDED.prompt_tokens,
    completion_tokens = t.completion_tokens + EXCLUDED.completion_tokens,
    cached_tokens = t.cached_tokens + EXCLUDED.cached_tokens
), c AS (
  INSERT INTO conversations AS s (org_id, session_id, started_at, last_seen_at)
  SELECT org_id, session_id, min(created_at), max(created_at)
  FROM r WHERE session_id IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (org_id, session_id) DO UPDATE SET
    started_at = least(s.started_at, EXCLUDED.started_at),
    last_seen_at = greatest(s.last_seen_at, EXCLUDED.last_seen_at)
)
SELECT id FROM r`;

function requestRow(e: RequestCompleted, createdAt: Date): Record<(typeof REQUEST_COLUMNS)[number], unknown> {
  const usageLines = e.usageLines.map((l) => ({
    kind: l.kind,
    tokens: l.tokens,
    price_per_million_nanodollars: l.pricePerMillionNanodollars.toString(),
    cost_nanodollars: l.costNanodollars.toString(),
    price_version_id: l.priceVersionId === 0n ? null : l.priceVersionId.toString(),
  }));
  const values: Record<(typeof REQUEST_COLUMNS)[number], unknown> = {
    id: e.requestId,
    org_id: e.orgId,
    key_hash: orNull(e.keyHash),
    key_name: orNull(e.keyName),
    key_class: orNull(e.keyClass),
    workspace_id: orNull(e.workspaceId),
    workspace_name: orNull(e.workspaceName),
    created_at: createdAt.toISOString(),
    requested_model: e.requestedModel,
    served_model: orNull(e.servedModel),
    provider_slug: orNull(e.providerSlug),
    provider_name: orNull(e.providerName),
    endpoint_id: orNull(e.endpointId),
    status: e.status,
    finish_reason: orNull(e.finishReason),
    native_finish_reason: orNull(e.nativeFinishReason),
    is_byok: e.isByok,
    is_cache_hit: e.isCacheHit,
    cancelled: e.cancelled,
    streamed: e.streamed,
    quantization: orNull(e.quantization),
    ttft_ms: e.ttftMs ?? null,
    generation_ms: e.generationMs ?? null,
    routing_overhead_ms: e.routingOverheadMs ?? null,
    error_code: orNull(e.errorCode),
    error_message: orNull(e.errorMessage),
    billed_cost_nanodollars: e.billedCostNanodollars.toString(),
    list_cost_nanodollars: e.listCostNanodollars.toString(),
    prompt_tokens: e.usage?.promptTokens ?? 0,
    completion_tokens: e.usage?.completionTokens ?? 0,
    cached_tokens: e.usage?.cachedTokens ?? 0,
    cache_write_5m_tokens: e.usage?.cacheWrite5mTokens ?? 0,
    cache_write_1h_tokens: e.usage?.cacheWrite1hTokens ?? 0,
    reasoning_tokens: e.usage?.reasoningTokens ?? 0,
    usage_lines: usageLines,
    price_version_ids: e.priceVersionIds.map((v) => v.toString()),
    app_id: orNull(e.appId),
    app_title: orNull(e.appTitle),
    http_referer: orNull(e.httpReferer),
    app_hidden: e.appHidden,
    app_categories: e.appCategories,
    user_agent: orNull(e.userAgent),
    agent: orNull(e.agent),
    session_id: orNull(e.sessionId),
    run_id: orNull(e.runId),
    content_filter_labels: e.contentFilterLabels,
    ingress: orNull(e.ingress),
    dropped_tools: e.droppedTools,
  };
  return values;
}

/**
 * Stores completed requests with their upstream attempts, and adds them to the daily totals and
 * conversations, in one statement. Idempotent: the generation id is the primary key (and the event
 * id the gateway publishes under), so a redelivered event inserts nothing and adds nothing.
 * Returns the ids of the requests that were new.
 */
export async function recordRequests(
  q: Queryable,
  completed: RequestCompleted[],
  receivedAt: Date,
): Promise<Set<string>> {
  const requests: unknown[] = [];
  const attempts: unknown[] = [];
  for (const e of completed) {
    // The gateway stamps every event; the receive time only stands in for an event that lacks it.
    const createdAt = e.createdAtMs > 0n ? new Date(Number(e.createdAtMs)) : receivedAt;
    requests.push(requestRow(e, createdAt));
    for (const a of e.attempts) attempts.push(attemptRow(e, a, createdAt));
  }
  if (requests.length === 0) return new Set();
  const { rows } = await q.query<{ id: string }>(RECORD_REQUESTS, [JSON.stringify(requests), JSON.stringify(attempts)], {
    prepare: true,
  });
  return new Set(rows.map((r) => r.id));
}

function attemptRow(e: RequestCompleted, a: RequestCompleted["attempts"][number], createdAt: Date): Record<string, unknown> {
  return {
    id: a.id === "" ? attemptId(e.requestId, a.attempt) : a.id,
    request_id: e.requestId,
    attempt: a.attempt,
    created_at: (a.startedAtMs > 0n ? new Date(Number(a.startedAtMs)) : createdAt).toISOString(),
    model_id: orNull(a.modelId),
    provider_slug: orNull(a.providerSlug),
    endpoint_id: orNull(a.endpointId),
    is_byok: a.isByok,
    status: a.status === "ok" ? "ok" : "error",
    http_status: a.httpStatus ?? null,
    error_code: orNull(a.errorCode),
    error_message: orNull(a.errorMessage),
    duration_ms: a.durationMs ?? null,
    ttft_ms: a.ttftMs ?? null,
  };
}
