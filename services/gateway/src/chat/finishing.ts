import { DomainError } from "@router/errors";
import { events, type ledger } from "@router/proto";
import type { CascadeResult, Served } from "../dispatch/types";
import { generationRecordOf } from "../generation/generation-record";
import { Refused } from "./admission";
import { cascadeModels, type ChatContext } from "./chat-context";
import type { ChatDeps } from "./chat-deps";
import { dispatchError } from "./dispatch-error";
import { GATEWAY_SHUTDOWN, isShutdown } from "../shutdown/drain";
import { completedEvent, outcomeOf, REQUEST_COMPLETED_TOPIC, type RequestOutcome } from "./request-outcome";

const CANCELLED = "router.client_cancelled";

type FinishingDeps = Pick<ChatDeps, "recent" | "metrics" | "closings" | "leases" | "credentials" | "bus" | "log" | "clock" | "drain">;

/** What a run's turn did, for the run's counters and tree (the ledger's). */
function runTurnOf(runId: string, outcome: RequestOutcome): ledger.RunTurn {
  return {
    runId,
    model: outcome.served?.modelId ?? "",
    finishReason: outcome.finishReason ?? "",
    toolCalls: outcome.toolCalls.total,
    failedToolCalls: outcome.toolCalls.invalid,
    promptTokens: BigInt(outcome.usage?.prompt ?? 0),
    cachedTokens: BigInt(outcome.usage?.cached ?? 0),
  };
}

/** How a request without a served answer ended when it did not simply fail: the client left, or the gateway stopped. */
export type Interrupted = "cancelled" | "shutdown" | null;

export function interruptionOf(signal: AbortSignal): Interrupted {
  if (!signal.aborted) return null;
  return isShutdown(signal) ? "shutdown" : "cancelled";
}

/**
 * The end of every request, whichever way it ended: the generation readable at once, then off the
 * response path the hold settled with the actual list cost (or released when nothing was served),
 * the credential marked used, failed attempts logged and `router.request.completed.v1` published.
 */
export class Finishing {
  constructor(private readonly deps: FinishingDeps) {}

  finish(ctx: ChatContext, outcome: RequestOutcome, served: Served | null): void {
    const event = completedEvent(outcome);
    this.deps.recent.put(ctx.caller.orgId, generationRecordOf(event));
    this.deps.metrics?.chatFinished(outcome);
    const work = new Promise<void>((resolve) => setImmediate(() => resolve(this.afterResponse(ctx, outcome, served, event))));
    this.deps.drain?.defer(work);
  }

  /** Off the response path; the promise is the event's publication (a stop waits for it). */
  private afterResponse(ctx: ChatContext, outcome: RequestOutcome, served: Served | null, event: events.RequestCompleted): Promise<void> {
    const { closings, bus, log, credentials, leases } = this.deps;
    // Every request reaches the ledger once it is over, with its hold when it has one (a lease's
    // requests are spent from the lease instead), so the ledger records each request's spend per
    // workspace and agent.
    const request = {
      orgId: ctx.caller.orgId,
      requestId: ctx.id,
      workspaceId: ctx.caller.key.workspaceId ?? "",
      agent: ctx.headers.agent ?? "",
      isByok: true,
      ...(ctx.runId ? { runTurn: runTurnOf(ctx.runId, outcome) } : {}),
    };
    if (served) closings.settle(ctx.holdId, outcome.listCost, outcome.billedCost, request);
    else closings.release(ctx.holdId, 0n, request);
    if (ctx.lease) {
      leases?.finish(ctx.lease, ctx.id, served ? { list: outcome.listCost, billed: outcome.billedCost } : null);
    }
    if (served) credentials.markUsed(served.credential.id, this.deps.clock.now());
    for (const a of outcome.attempts) {
      if (a.errorCode) {
        log.warn(
          { id: ctx.id, provider: a.candidate.providerSlug, endpoint: a.candidate.endpointId, status: a.httpStatus, code: a.errorCode },
          "gateway.upstream.call_failed",
        );
      }
    }
    return bus
      .publish({
        topic: REQUEST_COMPLETED_TOPIC,
        key: ctx.caller.orgId,
        type: REQUEST_COMPLETED_TOPIC,
        // The generation id: a re-publish of the same request is the same event for consumers.
        id: ctx.id,
        payload: events.RequestCompleted.encode(event).finish(),
      })
      .catch((err: unknown) => log.error({ err, id: ctx.id }, "gateway.event.publish_failed"));
  }

  /** A refusal or a service failure before any provider was asked; answers the client's error. */
  beforeDispatch(ctx: ChatContext, err: unknown): DomainError {
    const domain = err instanceof DomainError ? err : new DomainError("internal", "internal error", { cause: err });
    if (!(err instanceof DomainError)) this.deps.log.error({ err, id: ctx.id }, "gateway.chat.failed");
    const outcome = outcomeOf(ctx, {
      status: err instanceof Refused ? "refused" : "error",
      errorCode: domain.code,
      errorMessage: domain.message,
    });
    this.finish(ctx, outcome, null);
    return domain;
  }

  /** Nothing was served (every candidate failed, or the client left); answers the client's error. */
  unserved(ctx: ChatContext, result: CascadeResult, interrupted: Interrupted): { error: DomainError; outcome: RequestOutcome } {
    const cancelled = interrupted === "cancelled";
    const error = interrupted === "shutdown" ? GATEWAY_SHUTDOWN : dispatchError(result, cascadeModels(ctx));
    const outcome = outcomeOf(ctx, {
      status: cancelled ? "cancelled" : "error",
      errorCode: interrupted === "shutdown" ? error.code : (result.failure?.code ?? (cancelled ? CANCELLED : error.code)),
      errorMessage: interrupted === "shutdown" ? error.message : (result.failure?.recordMessage ?? error.message),
      attempts: result.attempts,
      upstreamMs: result.upstreamMs,
    });
    this.finish(ctx, outcome, null);
    return { error, outcome };
  }

  /** A bug inside dispatch: never a hang, never a lost hold. Answers the client's error. */
  crashed(ctx: ChatContext, err: unknown): DomainError {
    this.deps.log.error({ err, id: ctx.id }, "gateway.chat.failed");
    this.finish(ctx, outcomeOf(ctx, { status: "error", errorCode: "internal", errorMessage: "internal error" }), null);
    return new DomainError("internal", "internal error");
  }
}
