import type { eventViews } from "@router/proto";
import { dayOf, monthOf } from "../months/report-month";

/** What the rollups take from one completed request, shaped like the statement's JSON input. */
export interface CountedRequest {
  request_id: string;
  org_id: string;
  workspace_id: string;
  /** The workspace's name when the request was made ("" when the event carried none). */
  workspace_name: string;
  created_at: string;
  /** The first day of the request's UTC month, `YYYY-MM-01`. */
  month: string;
  /** The request's UTC date, `YYYY-MM-DD`. */
  day: string;
  /** The model that served, "" when none did (refused, or failed before any provider answered). */
  model: string;
  /** "" when the request named no agent. */
  agent: string;
  status: string;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  /** List price, nanodollars, as a decimal string (JSON numbers would lose bigint precision). */
  list_cost_nanodollars: string;
}

/**
 * The rollup input of a completed request, or null when no client report can show it: a request
 * made with a key that belongs to no workspace. Every status counts: a refused request and one
 * that failed before any token carry a list cost of 0, and a cancelled or broken stream carries the
 * tokens it used, which the ledger counted too (docs/adr, ADR 0084).
 */
export function countedRequest(e: eventViews.RequestCompletedRollup, receivedAt: Date): CountedRequest | null {
  if (e.workspaceId === "") return null;
  // The gateway stamps every event; the receive time only stands in for one that lacks it.
  const createdAt = e.createdAtMs > 0n ? new Date(Number(e.createdAtMs)) : receivedAt;
  return {
    request_id: e.requestId,
    org_id: e.orgId,
    workspace_id: e.workspaceId,
    workspace_name: e.workspaceName,
    created_at: createdAt.toISOString(),
    month: `${monthOf(createdAt).label}-01`,
    day: dayOf(createdAt),
    model: e.servedModel,
    agent: e.agent,
    status: e.status,
    prompt_tokens: e.usage?.promptTokens ?? 0,
    completion_tokens: e.usage?.completionTokens ?? 0,
    cached_tokens: e.usage?.cachedTokens ?? 0,
    reasoning_tokens: e.usage?.reasoningTokens ?? 0,
    list_cost_nanodollars: e.listCostNanodollars.toString(),
  };
}
