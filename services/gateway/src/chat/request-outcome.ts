import type { Nanodollars } from "@router/money";
import type { events } from "@router/proto";
import type { Caller } from "../auth/caller";
import type { Attempt, Candidate } from "../dispatch/cascade";
import type { FinishReason, TokenUsage } from "../providers/types";
import type { RouterHeaders } from "./router-headers";
import type { UsageLine } from "./usage-cost";

/** How one chat completion request ended: the metadata that activity and the ledger learn. */
export interface RequestOutcome {
  id: string;
  caller: Caller;
  createdAt: Date;
  headers: RouterHeaders;
  requestedModel: string;
  sessionId: string | null;
  runId: string | null;
  streamed: boolean;
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
}

const orEmpty = (s: string | null | undefined): string => s ?? "";
const optInt = (n: number | null): number | undefined => (n === null ? undefined : Math.round(n));

/** The `router.request.completed.v1` payload: metadata only, never a prompt or a completion. */
export function completedEvent(o: RequestOutcome): events.RequestCompleted {
  const key = o.caller.key;
  return {
    requestId: o.id,
    orgId: o.caller.orgId,
    keyHash: key.hash,
    keyName: orEmpty(key.name),
    keyClass: key.class,
    workspaceId: orEmpty(key.workspaceId),
    createdAtMs: BigInt(o.createdAt.getTime()),
    requestedModel: o.requestedModel,
    servedModel: orEmpty(o.served?.modelId),
    providerSlug: orEmpty(o.served?.providerSlug),
    endpointId: orEmpty(o.served?.endpointId),
    status: o.status,
    finishReason: orEmpty(o.finishReason),
    nativeFinishReason: orEmpty(o.nativeFinishReason),
    isByok: true,
    isCacheHit: (o.usage?.cached ?? 0) > 0,
    cancelled: o.status === "cancelled",
    streamed: o.streamed,
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
    runId: orEmpty(o.runId),
    appHidden: o.headers.appHidden,
    appCategories: o.headers.appCategories,
    usage: o.usage
      ? {
          promptTokens: o.usage.prompt,
          completionTokens: o.usage.completion,
          cachedTokens: o.usage.cached,
          reasoningTokens: o.usage.reasoning,
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
    })),
  };
}
