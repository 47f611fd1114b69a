/**
 * The API's resources as the dashboard reads them. The routes other services own are typed from
 * their descriptions (@router/management-api), type-only so no schema code reaches the bundle; the
 * gateway's own resources are written out here.
 */
import type { activity, alerts, broadcast, ledger, reports, routing, runaway } from "@router/management-api";
import type { z } from "zod";

// ---- the gateway's own routes -------------------------------------------------------------------

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

// ---- routes other services own (@router/management-api) -----------------------------------------

export type Totals = z.infer<typeof activity.totals>;
export type Summary = z.infer<typeof activity.summary>;
export type RequestRecord = z.infer<typeof activity.requestRecord>;
export type BreakdownDimension = z.infer<typeof activity.breakdown>["by"];
export type BreakdownGroup = z.infer<typeof activity.breakdownGroup>;
/** `GET /v1/activity/breakdown`. */
export type Breakdown = z.infer<typeof activity.breakdown>;
export type Dispatch = z.infer<typeof activity.upstreamAttempt>;
export type RequestDetail = z.infer<typeof activity.requestDetail>;

/** `GET /v1/workspaces/{id}/budgets` (the ledger's view). */
export type WorkspaceBudget = z.infer<typeof ledger.workspaceBudget>;
export type AgentBudget = z.infer<typeof ledger.agentBudget>;
export type AgentRow = z.infer<typeof ledger.agentRow>;
export type Run = z.infer<typeof ledger.run>;
export type RunStatus = Run["status"];
export type RunTurn = z.infer<typeof ledger.runTurn>;
export type RunTree = z.infer<typeof ledger.runTree>;

export type RoutingDefaults = z.infer<typeof routing.routingDefaults>;
export type Preset = z.infer<typeof routing.preset>;
export type PresetVersion = z.infer<typeof routing.presetVersion>;
export type PrivacyPolicy = z.infer<typeof routing.privacyPolicy>;
/** The saved policy's counts, or a preview's with the models it would exclude. */
export type Eligibility = z.infer<typeof routing.eligibilityCounts> & Partial<Pick<z.infer<typeof routing.eligibility>, "excluded">>;
export type PrivacyState = z.infer<typeof routing.privacyState>;
export type Guardrail = z.infer<typeof routing.guardrail>;
export type FilterAction = Guardrail["content_filters"][number]["action"];

export type AlertChannel = z.infer<typeof alerts.alertChannel>;
export type AlertDelivery = z.infer<typeof alerts.alertDelivery>;
export type RunawayFlag = z.infer<typeof runaway.shownRunawayFlag>;
export type Destination = z.infer<typeof broadcast.destination>;

export type Branding = z.infer<typeof reports.branding>;
export type ReportLine = z.infer<typeof reports.reportLine>;
export type ClientReport = z.infer<typeof reports.clientReport>;
