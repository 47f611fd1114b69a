/** The API's resources as the dashboard reads them (the fields it shows). */

export type Role = "owner" | "admin" | "member" | "billing" | "readonly";

export interface Session {
  expires_at: string;
  org_id: string;
  key_name: string | null;
  user: { id: string; name: string | null; email: string | null; avatar_url: string | null; provider: string } | null;
  auth_method: string;
}

export interface Membership {
  id: string;
  name: string | null;
  role: Role;
  role_name: string;
  current: boolean;
}

/** `GET /v1/organization`: id and slug never change, the plan is not changed here. */
export interface Organisation {
  id: string;
  name: string;
  slug: string;
  plan: string;
  created_at: string;
  members: number;
}

export interface SignInMethods {
  management_key: boolean;
  oauth: string[];
  wallet: boolean;
}

export interface Totals {
  requests: number;
  errors: number;
  byok_requests: number;
  /** At list price: what the providers charged on the organisation's own keys. */
  spend: number;
  /** Router's fees on top. */
  fees?: number;
  tokens: number;
}

export interface Summary {
  current: Totals;
  prior: Totals;
  daily: Array<Totals & { date: string }>;
}

export interface RequestRecord {
  id: string;
  created_at: string;
  requested_model: string;
  served_model: string | null;
  provider_slug: string | null;
  status: string;
  is_byok: boolean;
  error_code: string | null;
  error_message: string | null;
  total_cost: number;
  agent: string | null;
  app_id: string | null;
  app_title: string | null;
  generation_ms: number | null;
  /** With `include=key` on the list, and on the detail: the key charged (a dashboard session's is `dashboard:...`). */
  key?: { hash: string; name: string | null } | null;
}

export type BreakdownDimension = "model" | "provider" | "key" | "app" | "agent";

export interface BreakdownGroup {
  /** Null for requests without one (no app, no agent). */
  value: string | null;
  /** A key's name, an app's title. */
  label: string | null;
  requests: number;
  errors: number;
  spend: number;
  tokens: number;
  /** With `daily=true`: every day of the period, oldest first. */
  daily?: Array<{ date: string; requests: number; spend: number }>;
}

/** `GET /v1/activity/breakdown`. */
export interface Breakdown {
  by: BreakdownDimension;
  days: number;
  groups: BreakdownGroup[];
  others: BreakdownGroup | null;
}

export interface Dispatch {
  id: string;
  attempt: number;
  model_id: string;
  provider_slug: string;
  is_byok: boolean;
  status: string;
  http_status: number | null;
  error_code: string | null;
  error_message: string | null;
  duration_ms: number | null;
}

export interface RequestDetail extends RequestRecord {
  attempts: Dispatch[];
}

export type LimitReset = "daily" | "weekly" | "monthly" | "lifetime";

export interface KeyRow {
  hash: string;
  prefix: string;
  name: string | null;
  label: string | null;
  class: "inference" | "management";
  disabled: boolean;
  limit: number | null;
  limit_reset: LimitReset | null;
  limit_mode: "hard" | "soft";
  include_byok_in_limit: boolean;
  usage: number | null;
  limit_remaining: number | null;
  paused: boolean;
  paused_reason: string | null;
  created_at: string;
  expires_at: string | null;
}

export interface CreatedKey {
  key: string;
  hash: string;
  name: string | null;
}

export interface ProviderCredential {
  id: string;
  provider_slug: string;
  name: string | null;
  key_hint: string;
  tier: "prioritized" | "fallback";
  priority: number;
  disabled: boolean;
  last_used_at: string | null;
  /** A cloud credential's showable part (endpoint, region, project); absent for a key. */
  settings?: Record<string, unknown>;
}

export interface WorkspaceRow {
  id: string;
  name: string;
  spend_this_month: number;
}

/** `GET /v1/workspaces/{id}/budgets` (the ledger's view). */
export interface WorkspaceBudget {
  interval: LimitReset;
  limit_nanodollars: string;
  include_byok: boolean;
}

export interface PkceDescription {
  callback_url: string | null;
  host: string | null;
  headless: boolean;
  key_label: string;
  code_challenge_method: string;
  limit: number;
  expires_in_days: number;
}

export interface PkceApproval {
  code: string;
  redirect_to: string | null;
  expires_at: string;
}

export interface InvitationLookup {
  org_name: string | null;
  role: Role;
  role_name: string;
  expires_at: string;
}

export interface AgentBudget {
  agent: string;
  interval: LimitReset;
  limit_usd: number;
  include_byok: boolean;
  mode: "hard" | "soft";
  workspace_id: string | null;
}

export interface AgentRow {
  agent: string;
  last_seen: string | null;
  requests_this_month: number;
  spend_this_month: number;
  budgets: AgentBudget[];
}

export type RunStatus = "open" | "paused" | "completed" | "exhausted" | "cancelled";

export interface Run {
  id: string;
  status: RunStatus;
  goal: string | null;
  budget: number;
  spent: number;
  reserved: number;
  remaining: number;
  max_turns: number | null;
  turns_used: number;
  max_tool_calls: number | null;
  tool_calls_used: number;
  max_cost_per_minute: number | null;
  max_tool_calls_without_progress: number | null;
  tool_calls_without_progress: number;
  pause_reason: string | null;
  paused_at: string | null;
  created_at: string;
  closed_at: string | null;
}

export interface RunTurn {
  turn: number;
  request_id: string;
  status: string;
  model: string | null;
  finish_reason: string | null;
  cost: number;
  reserved: number;
  tool_calls: number;
  failed_tool_calls: number;
  prompt_tokens: number;
  cached_tokens: number;
  cache_hit_rate: number | null;
  model_switch: boolean;
  admitted_at: string;
}

export interface RunTree extends Run {
  tree: {
    turns: RunTurn[];
    cache_hit_rate: number | null;
    failed_tool_calls: number;
    model_switches: number;
    terminal_status: RunStatus | null;
  };
}

export interface Member {
  user_id: string;
  role: Role;
  role_name: string;
  joined_at: string;
  name: string | null;
  email: string | null;
  provider: string;
  is_you: boolean;
}

export interface Invitation {
  id: string;
  role: Role;
  created_at: string;
  expires_at: string;
  created_by_name: string | null;
  url?: string;
}

export interface RoutingDefaults {
  default_model: string | null;
  fallback_models: string[];
  default_sort: "price" | "throughput" | "latency" | null;
  lock_sort: boolean;
  updated_at: string | null;
}

export interface Preset {
  slug: string;
  name: string;
  description: string | null;
  version: number;
  body: Record<string, unknown>;
  reference: string;
  updated_at: string;
}

export interface PresetVersion {
  version: number;
  body: Record<string, unknown>;
  note: string | null;
  created_at: string;
}

export interface PrivacyPolicy {
  zdr: boolean;
  zdr_groups: string[];
  deny_training: boolean;
  regions: string[];
}

export interface Eligibility {
  available: number;
  unavailable: number;
  excluded?: Array<{ model_id: string; constraints: string[] }>;
}

export interface PrivacyState {
  policy: PrivacyPolicy;
  eligibility: Eligibility;
  regions: string[];
  groups: Array<{ group: string; models: number }>;
}

export interface PreviewCandidate {
  model: string;
  provider: string;
  endpoint_id: string;
  pricing: { prompt_per_million: number; completion_per_million: number } | null;
  pinned: boolean;
}

export interface RoutePreview {
  requested: string;
  strategy: string;
  would_dispatch: boolean;
  refusal: { status: number; code: string; message: string } | null;
  ordering: string;
  routing_seed: string | null;
  winner: PreviewCandidate | null;
  cascade: PreviewCandidate[];
  refused: Array<{ model: string; provider: string; endpoint_id: string; constraint: string }>;
  unresolved_models: string[];
  guardrails: { applied: string[] };
  content_filter: { labels: string[] } | null;
}

export type FilterAction = "block" | "redact" | "flag";

export interface Guardrail {
  id: string;
  name: string;
  model_allowlist: string[];
  provider_allowlist: string[];
  allowed_data_regions: string[];
  budget_nanodollars: string | null;
  budget_reset: string | null;
  content_filter_builtins: string[];
  content_filters: Array<{ name?: string; pattern: string; action: FilterAction }>;
  created_at: string;
  assignments: Array<{ subject_type: "key" | "member"; subject_id: string }>;
}

export interface AlertChannel {
  id: string;
  kind: "webhook" | "chat" | "email";
  target: string;
  name: string;
  thresholds: number[];
  disabled: boolean;
  created_at: string;
  signing_secret?: string;
}

export interface AlertDelivery {
  id: string;
  channel_name: string | null;
  channel_kind: string | null;
  event: string;
  threshold: number | null;
  status: "sent" | "failed" | "skipped";
  http_status: number | null;
  error: string | null;
  key_name: string | null;
  agent_tag: string | null;
  attempts: number;
  created_at: string;
}

export interface RunawayFlag {
  id: string;
  subject_kind: "key" | "agent";
  subject: string;
  key_name: string | null;
  action: "alert" | "paused";
  kind: "spend" | "rate";
  window_start: string;
  window_end: string;
  spend: number;
  usual_spend: number;
  requests: number;
  usual_requests: number;
  created_at: string;
  key_paused: boolean;
}

export interface Destination {
  id: string;
  kind: "webhook" | "otlp";
  url: string;
  name: string | null;
  sample_rate: number;
  disabled: boolean;
  header_name: string | null;
  header_hint: string | null;
  last_attempt_at: string | null;
  last_success_at: string | null;
  last_http_status: number | null;
  last_error: string | null;
  created_at: string;
  signing_secret?: string;
}

export interface Branding {
  org_name: string | null;
  brand_name: string | null;
  brand_logo: string | null;
  brand_footer: string | null;
}

export interface ReportLine {
  requests: number;
  total_tokens: number;
  spend: number;
}

export interface ClientReport {
  workspace: { id: string; name: string; name_in_month: string | null };
  month: string;
  period: { start: string; end: string; ended: boolean };
  branding: Branding;
  totals: ReportLine & { requests_by_status: Record<string, number> };
  by_model: Array<ReportLine & { model: string | null }>;
  by_agent: Array<ReportLine & { agent: string | null }>;
  by_day: Array<{ date: string; requests: number; spend: number }>;
  generated_at: string;
}
