import type { EventBus } from "@router/bus";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import type { ResolveCaller } from "../auth/authenticate";
import type { UpstreamDispatcher } from "../dispatch/upstream-dispatcher";
import type { RecentGenerations } from "../generation/recent-generations";
import type { GatewayMetrics } from "../metrics";
import type { CredentialSource } from "../provider-keys/dispatch-credential";
import type { RoutingPort } from "../routing/routing-port";
import type { HoldClosings } from "../spend/hold-closings";
import type { LedgerPort } from "../spend/ledger-port";
import type { SpendLeases } from "../spend/spend-leases";
import type { BudgetSubjects } from "../spend/budget-subjects";
import type { CreditStanding } from "../spend/credit-standing";
import type { InferenceRateTiers } from "../rate-limits/inference-tiers";
import type { Drain } from "../shutdown/drain";
import type { ContentFilters } from "../content-filter/content-filters";

/** What the chat path is built from; `main` wires the real ones, tests hand in their own. */
export interface ChatDeps {
  /** Inference-key (or session) authentication. */
  resolveCaller: ResolveCaller;
  routing: RoutingPort;
  ledger: LedgerPort;
  /** Where settlements and releases wait for their batched call to the ledger. */
  closings: HoldClosings;
  /** Admits requests under hard ceilings from spend leases; every admission asks Admit when omitted. */
  leases?: SpendLeases;
  /** Which budgets exist, so a request nothing counts skips Admit; every admission asks Admit when omitted. */
  budgetSubjects?: BudgetSubjects;
  /** Whether a fee is charged from credits (then every request asks Admit); none assumed when omitted. */
  credits?: CreditStanding;
  /** Request-rate ceilings by lifetime credit purchase (`ROUTER_RATE_TIERS`); none when omitted. */
  rateTiers?: InferenceRateTiers;
  credentials: CredentialSource;
  bus: EventBus;
  log: Logger;
  clock: Clock;
  /** Shared with `generationRoutes` so a generation is readable the moment it was answered. */
  recent: RecentGenerations;
  /** The provider HTTP client and circuit breakers; one per process. Built here when omitted. */
  upstream?: UpstreamDispatcher;
  /** `ROUTER_PROVIDER_<SLUG>_BASE_URL` overrides by provider slug; they win over the catalog. */
  providerBaseUrls?: Record<string, string>;
  /** Quiet time after which a stream gets a keepalive comment. Default 5 s. */
  keepaliveMs?: number;
  /** Where each request's outcome, overhead and attempts are counted; none when omitted. */
  metrics?: GatewayMetrics;
  /** Runs the applied guardrails' content filters over the messages; built here when omitted. */
  contentFilters?: ContentFilters;
  /** The gateway's graceful stop: cuts requests at the end of its grace, and waits for their finishing. */
  drain?: Drain;
}
