import { NO_TOOL_CALLS, type ToolCallCount } from "./tool-call-check";
import { performance } from "node:perf_hooks";
import { basisPointsOf, type Nanodollars } from "@router/money";
import { TOPICS, type events } from "@router/proto";
import type { Caller } from "../auth/caller";
import type { Attempt, Candidate } from "../dispatch/types";
import type { FinishReason, TokenUsage } from "@router/providers";
import type { ChatContext } from "./chat-context";
import type { RouterHeaders } from "../request-model/router-headers";
import { droppedBuiltinTools } from "./builtin-tools";
import { totalCost, usageLines, type UsageLine } from "../spend/usage-cost";

export const REQUEST_COMPLETED_TOPIC = TOPICS.requestCompleted;

/** How one chat completion request ended: the metadata that activity and the ledger learn. */
export interface RequestOutcome {
  id: string;
  caller: Caller;
  createdAt: Date;
  headers: RouterHeaders;
  requestedModel: string;
  sessionId: string | null;
  /** Routing's sticky-pin reference for the request (empty when none): routing pins what served. */
  stickyPin: string;
  runId: string | null;
  streamed: boolean;
  /** The format the request came in (`chat_completions`, `responses`, `anthropic_messages`). */
  ingress: string;
  status: "complete" | "error" | "refused" | "cancelled";
  served: Candidate | null;
  finishReason: FinishReason | null;
  nativeFinishReason: string | null;
  usage: TokenUsage | null;
  lines: UsageLine[];
  listCost: Nanodollars;
  billedCost: Nanodollars;
  ttftMs: number | null;
  generationMs: number | null;
  routingOverheadMs: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  attempts: Attempt[];
  /** Tool calls in the served answer (routing's tool-call reliability). */
  toolCalls: ToolCallCount;
  /** Content-filter labels that matched the messages. */
  contentFilterLabels: string[];
  /** Built-in tools the serving endpoint could not run, so it was sent the request without them. */
  droppedTools: string[];
}

/** What a stage knows of how the request ended; the rest of the outcome comes from the context. */
export type OutcomeFacts = Partial<Omit<RequestOutcome, "routingOverheadMs">> &
  Pick<RequestOutcome, "status"> & {
    /** Milliseconds inside provider calls, taken off the handler's time to give the overhead. */
    upstreamMs?: number;
  };

export function outcomeOf(ctx: ChatContext, o: OutcomeFacts): RequestOutcome {
  const usage = o.usage ?? null;
  const lines = usage && o.served ? usageLines(usage, o.served) : [];
  const dispatched = (o.attempts?.length ?? 0) > 0;
  return {
    id: ctx.id,
    caller: ctx.caller,
    createdAt: ctx.createdAt,
    headers: ctx.headers,
    requestedModel: ctx.request.model ?? "",
    sessionId: ctx.request.session_id ?? ctx.headers.sessionId,
    stickyPin: ctx.plan?.sticky?.pinRef ?? "",
    runId: ctx.request.run_id ?? null,
    streamed: ctx.request.stream === true,
    ingress: ctx.ingress.name,
    status: o.status,
    served: o.served ?? null,
    finishReason: o.finishReason ?? (o.status === "error" ? "error" : null),
    nativeFinishReason: o.nativeFinishReason ?? null,
    usage,
    lines,
    listCost: totalCost(lines),
    // BYOK: the account is charged Router's fee on the list cost (what the ledger charges from
    // credits, 0 unless the operator sets one); list cost is what limits measure.
    billedCost: basisPointsOf(totalCost(lines), ctx.feeBps),
    ttftMs: o.ttftMs ?? null,
    generationMs: o.generationMs ?? null,
    routingOverheadMs: dispatched ? Math.max(0, performance.now() - ctx.t0 - (o.upstreamMs ?? 0)) : null,
    errorCode: o.errorCode ?? null,
    errorMessage: o.errorMessage ?? null,
    attempts: o.attempts ?? [],
    toolCalls: o.toolCalls ?? NO_TOOL_CALLS,
    contentFilterLabels: ctx.contentFilterLabels,
    droppedTools: o.served ? droppedBuiltinTools(ctx.builtinTools, o.served, ctx.native) : [],
  };
}

const orEmpty = (s: string | null | undefined): string => s ?? "";
const optInt = (n: number | null): number | undefined => (n === null ? undefined : Math.round(n));

/** The `router.request.completed.v1` payload: metadata only, never a prompt or a completion. */
export function completedEvent(o: RequestOutcome): events.RequestCompleted {
  const key = o.caller.key;
  return {
    requestId: o.id,
    orgId: o.caller.orgId,
    // Set by Finishing (`served`, the lease); never by a gateway.
    spendLeaseHoldId: "",
    settledByLedger: false,
    keyHash: key.hash,
    keyName: orEmpty(key.name),
    keyClass: key.class,
    workspaceId: orEmpty(key.workspaceId),
    workspaceName: orEmpty(key.workspaceName),
    createdAtMs: BigInt(o.createdAt.getTime()),
    requestedModel: o.requestedModel,
    servedModel: orEmpty(o.served?.modelId),
    providerSlug: orEmpty(o.served?.providerSlug),
    providerName: orEmpty(o.served?.providerName),
    endpointId: orEmpty(o.served?.endpointId),
    status: o.status,
    finishReason: orEmpty(o.finishReason),
    nativeFinishReason: orEmpty(o.nativeFinishReason),
    isByok: true,
    isCacheHit: (o.usage?.cached ?? 0) > 0,
    cancelled: o.status === "cancelled",
    streamed: o.streamed,
    ingress: o.ingress,
    quantization: orEmpty(o.served?.quantization),
    ttftMs: optInt(o.ttftMs),
    generationMs: optInt(o.generationMs),
    routingOverheadMs: optInt(o.routingOverheadMs),
    errorCode: orEmpty(o.errorCode),
    errorMessage: orEmpty(o.errorMessage),
    billedCostNanodollars: o.billedCost,
    listCostNanodollars: o.listCost,
    appId: orEmpty(o.headers.appId),
    appTitle: orEmpty(o.headers.appTitle),
    httpReferer: orEmpty(o.headers.httpReferer),
    userAgent: orEmpty(o.headers.userAgent),
    agent: orEmpty(o.headers.agent),
    sessionId: orEmpty(o.sessionId),
    stickyPin: o.stickyPin,
    toolCalls: o.toolCalls.total,
    invalidToolCalls: o.toolCalls.invalid,
    contentFilterLabels: o.contentFilterLabels,
    droppedTools: o.droppedTools,
    runId: orEmpty(o.runId),
    appHidden: o.headers.appHidden,
    appCategories: o.headers.appCategories,
    usage: o.usage
      ? {
          promptTokens: o.usage.prompt,
          completionTokens: o.usage.completion,
          cachedTokens: o.usage.cached,
          reasoningTokens: o.usage.reasoning,
          cacheWrite5mTokens: o.usage.cacheWrite5m ?? 0,
          cacheWrite1hTokens: o.usage.cacheWrite1h ?? 0,
        }
      : undefined,
    usageLines: o.lines.map((l) => ({
      kind: l.kind,
      tokens: l.tokens,
      pricePerMillionNanodollars: l.pricePerMillion,
      costNanodollars: l.cost,
      priceVersionId: l.priceVersionId,
    })),
    priceVersionIds: o.served?.price ? [o.served.price.priceVersionId] : [],
    attempts: o.attempts.map((a) => ({
      id: a.id,
      attempt: a.attempt,
      modelId: a.candidate.modelId,
      providerSlug: a.candidate.providerSlug,
      endpointId: a.candidate.endpointId,
      isByok: true,
      status: a.status,
      httpStatus: a.httpStatus ?? undefined,
      errorCode: orEmpty(a.errorCode),
      errorMessage: orEmpty(a.errorMessage),
      durationMs: a.durationMs ?? undefined,
      ttftMs: a.ttftMs ?? undefined,
      startedAtMs: BigInt(a.startedAtMs),
      circuitOpen: a.circuitOpen,
    })),
  };
}
