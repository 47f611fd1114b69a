/**
 * The API's resources as the dashboard reads them, typed from the routes' descriptions
 * (@router/management-api), type-only so no schema code reaches the bundle. The route preview,
 * part of the inference API, is written out here.
 */
import type { activity, alerts, broadcast, keys, ledger, organisations, people, providerKeys, reports, routing, runaway, sessions } from "@router/management-api";
import type { z } from "zod";

// ---- the gateway's own routes -------------------------------------------------------------------

export type Member = z.infer<typeof people.member>;
export type Role = Member["role"];
export type Invitation = z.infer<typeof people.invitation> & Partial<Pick<z.infer<typeof people.createdInvitation>, "url">>;
export type InvitationLookup = z.infer<typeof people.invitationLookup>;
export type Session = z.infer<typeof sessions.session>;
export type Membership = z.infer<typeof sessions.membership>;
export type SignInMethods = z.infer<typeof sessions.signInMethods>;
export type PkceDescription = z.infer<typeof sessions.pkceDescription>;
export type PkceApproval = z.infer<typeof sessions.pkceApproval>;
/** `GET /v1/organization`: id and slug never change, the plan is not changed here. */
export type Organisation = z.infer<typeof organisations.organisation>;
export type WorkspaceRow = z.infer<typeof organisations.workspace>;
export type KeyRow = z.infer<typeof keys.keyRow>;
export type LimitReset = NonNullable<KeyRow["limit_reset"]>;
export type CreatedKey = z.infer<typeof keys.createdKey>;
export type ProviderCredential = z.infer<typeof providerKeys.credential>;

// ---- the route preview (the inference API's) ---------------------------------------------------

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

// ---- routes other services own -----------------------------------------------------------------

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
