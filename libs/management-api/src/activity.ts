import { z } from "zod";
import { dataOf, FREE_FORM, intParam, nanodollars, pageOf, route, timestamp, usd } from "./route";

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;
export const MAX_DAYS = 3650;
export const DEFAULT_SUMMARY_DAYS = 30;

/** Query parameters every newest-first list of activity takes. */
export const pagingParams = {
  limit: intParam(1, MAX_LIMIT).default(DEFAULT_LIMIT),
  cursor: z.string().optional(),
  /** A window ending now, in days. */
  days: intParam(1, MAX_DAYS).optional(),
};

// Workspace ids are `ws_` plus base62 (hex is a subset).
const WORKSPACE_ID = /^ws_[A-Za-z0-9]{1,64}$/;

/** A `workspace` filter (the gateway has already refused another organisation's). */
export const workspaceFilter = z.string().regex(WORKSPACE_ID, "must be a workspace id (ws_...)").optional();

/** A free-text filter that matches one stored value exactly. */
export const textFilter = z.string().max(200, "is too long").optional();

// The agent name rule of the product's API.
const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

const trueOrFalse = z.enum(["true", "false"], { error: "must be true or false" }).transform((v) => v === "true");

export const activityQuery = z.object({
  ...pagingParams,
  model: textFilter,
  provider: textFilter,
  workspace: workspaceFilter,
  agent: z.string().regex(AGENT_NAME, "must be an agent name").optional(),
  status: z.string().regex(/^[a-z_]{1,32}$/, "must be a request status such as complete").optional(),
  byok: trueOrFalse.optional(),
  app: textFilter,
  /** A key's hash (or a dashboard session's charge hash), as the row's `key.hash` gives it. */
  key: textFilter,
  /** `include=key` adds each row's `key`. */
  include: z.enum(["key"], { error: "must be key" }).optional(),
});

export const generationQuery = z.object({
  id: z.string({ error: "is required" }).min(1, "is required").max(200, "is too long"),
});

export const summaryQuery = z.object({
  days: intParam(1, MAX_DAYS).default(DEFAULT_SUMMARY_DAYS),
  workspace: workspaceFilter,
});

export const BREAKDOWN_DIMENSIONS = ["model", "provider", "key", "app", "agent"] as const;
const DEFAULT_GROUPS = 10;
const MAX_GROUPS = 100;

export const breakdownQuery = z.object({
  by: z.enum(BREAKDOWN_DIMENSIONS, { error: "must be one of model, provider, key, app, agent" }),
  days: intParam(1, MAX_DAYS).default(DEFAULT_SUMMARY_DAYS),
  workspace: workspaceFilter,
  limit: intParam(1, MAX_GROUPS).default(DEFAULT_GROUPS),
  /** `daily=true` adds each group's days (the stacked chart's series). */
  daily: trueOrFalse.default(false),
});

export const exportQuery = z.object({
  month: z
    .string()
    // Years from 1970: Date.UTC reads years 0-99 as 1900-1999.
    .regex(/^(19[7-9]\d|[2-9]\d{3})-(0[1-9]|1[0-2])$/, "must be a month as YYYY-MM (UTC)")
    .optional(),
  workspace: workspaceFilter,
});

export const upstreamQuery = z.object({
  ...pagingParams,
  request: textFilter,
  provider: textFilter,
  status: z.enum(["ok", "error"], { error: "must be ok or error" }).optional(),
});

export const conversationsQuery = z.object(pagingParams);

/** The key a request was charged to (a dashboard session's is `dashboard:...`). */
const chargedKey = z.object({ hash: z.string(), name: z.string().nullable() });

/** A request record: `total_cost` is Router's fee (also `fee`), `list_cost` the provider's list price. */
export const requestRecord = z.object({
  id: z.string(),
  created_at: timestamp,
  requested_model: z.string(),
  served_model: z.string().nullable(),
  provider_slug: z.string().nullable(),
  status: z.string(),
  finish_reason: z.string().nullable(),
  native_finish_reason: z.string().nullable(),
  is_byok: z.boolean(),
  is_cache_hit: z.boolean(),
  cancelled: z.boolean(),
  streamed: z.boolean(),
  quantization: z.string().nullable(),
  ttft_ms: z.number().int().nullable(),
  generation_ms: z.number().int().nullable(),
  routing_overhead_ms: z.number().int().nullable(),
  error_code: z.string().nullable(),
  error_message: z.string().nullable(),
  total_cost: usd,
  list_cost: usd,
  fee: usd,
  app_id: z.string().nullable(),
  app_title: z.string().nullable(),
  http_referer: z.string().nullable(),
  workspace_id: z.string().nullable(),
  agent: z.string().nullable(),
  ingress: z.string(),
  /** With `include=key`. */
  key: chargedKey.nullable().optional(),
});

export const usageLine = z.object({
  kind: z.string(),
  tokens: z.number().int(),
  price_per_million: usd,
  price_per_million_nanodollars: nanodollars,
  cost: usd,
  cost_nanodollars: nanodollars,
  price_version_id: z.number().int().nullable(),
});

/** One upstream attempt (a dispatch) of a request. */
export const upstreamAttempt = z.object({
  id: z.string(),
  request_id: z.string(),
  created_at: timestamp,
  attempt: z.number().int(),
  model_id: z.string(),
  provider_slug: z.string(),
  endpoint_id: z.string().nullable(),
  is_byok: z.boolean(),
  status: z.string(),
  http_status: z.number().int().nullable(),
  error_code: z.string().nullable(),
  error_message: z.string().nullable(),
  duration_ms: z.number().int().nullable(),
  ttft_ms: z.number().int().nullable(),
});

export const requestDetail = requestRecord.extend({
  key: chargedKey.nullable(),
  session_id: z.string().nullable(),
  run_id: z.string().nullable(),
  content_filter_labels: z.array(z.string()),
  dropped_tools: z.array(z.string()),
  cache_read_tokens: z.number().int(),
  cache_write_5m_tokens: z.number().int(),
  cache_write_1h_tokens: z.number().int(),
  usage_lines: z.array(usageLine),
  price_version_ids: z.array(z.number().int()),
  attempts: z.array(upstreamAttempt),
});

/** The generation record: pricing detail of one completion, metadata only. */
export const generationRecord = z.object({
  id: z.string(),
  model: z.string().nullable(),
  provider_name: z.string().nullable(),
  endpoint_id: z.string().nullable(),
  quantization: z.string().nullable(),
  total_cost: usd,
  list_cost: usd,
  fee: usd,
  finish_reason: z.string().nullable(),
  native_finish_reason: z.string().nullable(),
  streamed: z.boolean(),
  cancelled: z.boolean(),
  is_byok: z.boolean(),
  latency: z.number().int().nullable(),
  generation_time: z.number().int().nullable(),
  tokens_prompt: z.number().int(),
  tokens_completion: z.number().int(),
  tokens_cached: z.number().int(),
  tokens_cache_write_5m: z.number().int(),
  tokens_cache_write_1h: z.number().int(),
  is_cache_hit: z.boolean(),
  price_version_ids: z.array(z.number().int()),
  usage_lines: z.array(usageLine),
  app_id: z.string().nullable(),
  app_title: z.string().nullable(),
  http_referer: z.string().nullable(),
  user_agent: z.string().nullable(),
  dropped_tools: z.array(z.string()),
  created_at: timestamp,
});

/** A period's sums: `spend` at list price (the providers' charge), `fees` Router's. */
export const totals = z.object({
  requests: z.number().int(),
  errors: z.number().int(),
  byok_requests: z.number().int(),
  spend: usd,
  fees: usd,
  tokens: z.number().int(),
  prompt_tokens: z.number().int(),
  cached_tokens: z.number().int(),
  cache_hit_rate: z.number().nullable(),
  blended_per_million: usd.nullable(),
});

export const summary = z.object({
  current: totals,
  prior: totals,
  daily: z.array(totals.extend({ date: z.string() })),
});

export const breakdownGroup = z.object({
  /** Null for requests without one (no app, no agent). */
  value: z.string().nullable(),
  /** A key's name, an app's title. */
  label: z.string().nullable(),
  requests: z.number().int(),
  errors: z.number().int(),
  spend: usd,
  spend_nanodollars: nanodollars,
  tokens: z.number().int(),
  /** With `daily=true`: every day of the period, oldest first. */
  daily: z.array(z.object({ date: z.string(), requests: z.number().int(), spend: usd })).optional(),
});

export const breakdown = z.object({
  by: z.enum(BREAKDOWN_DIMENSIONS),
  days: z.number().int(),
  groups: z.array(breakdownGroup),
  others: breakdownGroup.nullable(),
});

export const conversation = z.object({
  session_id: z.string(),
  generations: z.number().int(),
  errors: z.number().int(),
  started_at: timestamp,
  last_seen_at: timestamp,
  spend: usd,
  tokens: z.number().int(),
  models: z.array(z.string()),
  providers: z.array(z.string()),
});

/** What a logged generation's content route answers (no release stores content yet: 404 `not_logged`). */
export const generationContent = z.object({
  request_id: z.string(),
  content: z.unknown().meta({ description: "the stored prompt and completion as they were sent", [FREE_FORM]: true }),
});

const owner = "activity" as const;
const usage = { owner, access: "management" as const, permission: "usage:read" as const };

export const ACTIVITY_ROUTES = [
  route({ ...usage, method: "get", path: "/v1/activity", summary: "Usage, one row per request", query: activityQuery, answer: pageOf(requestRecord) }),
  route({ ...usage, method: "get", path: "/v1/activity/summary", summary: "Usage summary", query: summaryQuery, answer: dataOf(summary) }),
  route({
    ...usage,
    method: "get",
    path: "/v1/activity/breakdown",
    summary: "The summary's period split by model, provider, key, app or agent",
    query: breakdownQuery,
    answer: dataOf(breakdown),
  }),
  route({ ...usage, permission: "usage:export", method: "get", path: "/v1/activity/export", summary: "A month of usage as CSV", query: exportQuery, answer: "csv" }),
  route({ ...usage, method: "get", path: "/v1/activity/requests/:id", summary: "One request with its usage lines and dispatches", answer: dataOf(requestDetail) }),
  route({ ...usage, method: "get", path: "/v1/activity/upstream", summary: "Upstream provider requests", query: upstreamQuery, answer: pageOf(upstreamAttempt) }),
  route({
    ...usage,
    method: "get",
    path: "/v1/activity/conversations",
    summary: "Conversations (requests grouped by session_id)",
    query: conversationsQuery,
    answer: pageOf(conversation),
  }),
  route({
    owner,
    access: "inference",
    permission: null,
    method: "get",
    path: "/v1/generation",
    summary: "The record of a generation made with the calling key",
    query: generationQuery,
    answer: dataOf(generationRecord),
  }),
  route({ ...usage, method: "get", path: "/v1/generation/:id/content", summary: "A generation's stored prompt and completion", answer: dataOf(generationContent) }),
];
