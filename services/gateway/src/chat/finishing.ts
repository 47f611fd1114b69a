import { DomainError } from "@router/errors";
import { events } from "@router/proto";
import type { CascadeResult, Served } from "../dispatch/types";
import { Refused } from "./admission";
import { cascadeModels, type ChatContext } from "./chat-context";
import type { ChatDeps } from "./chat-deps";
import { dispatchError } from "./dispatch-error";
import { GATEWAY_SHUTDOWN, isShutdown } from "../shutdown/drain";
import { completedEvent, outcomeOf, REQUEST_COMPLETED_TOPIC, type RequestOutcome } from "./request-outcome";

const CANCELLED = "router.client_cancelled";

type FinishingDeps = Pick<ChatDeps, "recent" | "metrics" | "closings" | "leases" | "credentials" | "bus" | "log" | "clock" | "drain">;

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

  /**
   * Resolves once the request's record is on the bus (the broker acknowledged it, or the bus's
   * durable outbox has it): a served answer is written only then, so a gateway killed right after
   * answering has lost no spend. Never rejects (a refused record is logged).
   */
  finish(ctx: ChatContext, outcome: RequestOutcome, served: Served | null): Promise<void> {
    const event = completedEvent(outcome);
    // The ledger settles the request from this event (durable on the bus): served or not, and the
    // lease that admitted it, if one did.
    event.served = served !== null;
    event.spendLeaseHoldId = ctx.lease?.lease.holdId ?? "";
    // The ledger settles this hold without looking it up; when admission never answered, it looks.
    if (ctx.holdKnown) event.holdId = ctx.holdId;
    // Encoded once: the bus carries these bytes, and the recent generations keep them.
    const payload = events.RequestCompleted.encode(event).finish();
    this.deps.recent.put(ctx.caller.orgId, ctx.id, payload);
    this.deps.metrics?.chatFinished(outcome);
    // The ledger settles from the record, so it leaves before the answer; the rest waits until
    // after the response.
    const published = this.publish(ctx, payload);
    const work = new Promise<void>((resolve) => setImmediate(() => resolve(this.afterResponse(ctx, outcome, served, published))));
    this.deps.drain?.defer(work);
    return published;
  }

  /** Off the response path; the promise is the event's publication (a stop waits for it). */
  private afterResponse(ctx: ChatContext, outcome: RequestOutcome, served: Served | null, published: Promise<void>): Promise<void> {
    const { log, credentials, leases } = this.deps;
    // Every request reaches the ledger once it is over through its event: the ledger settles its
    // hold or its lease's spend and records it per workspace and agent (and a run's turn), so a
    // gateway that stops after publishing loses nothing. Until then the hold is renewed here.
    if (ctx.lease) leases?.finish(ctx.lease, served ? { list: outcome.listCost } : null);
    if (served) credentials.markUsed(served.credential.id, this.deps.clock.now());
    for (const a of outcome.attempts) {
      if (a.errorCode) {
        log.warn(
          { id: ctx.id, provider: a.candidate.providerSlug, endpoint: a.candidate.endpointId, status: a.httpStatus, code: a.errorCode },
          "gateway.upstream.call_failed",
        );
      }
    }
    return published;
  }

  private publish(ctx: ChatContext, payload: Uint8Array): Promise<void> {
    const { bus, log, closings } = this.deps;
    return bus
      .publish({
        topic: REQUEST_COMPLETED_TOPIC,
        key: ctx.caller.orgId,
        type: REQUEST_COMPLETED_TOPIC,
        // The generation id: a re-publish of the same request is the same event for consumers.
        id: ctx.id,
        payload,
      })
      .catch((err: unknown) => log.error({ err, id: ctx.id }, "gateway.event.publish_failed"))
      // Published: the ledger settles it. Lost: the hold expires and is charged as lost.
      .finally(() => {
        closings.done(ctx.holdId);
        closings.doneTurn(ctx.id);
      });
  }

  /** A refusal or a service failure before any provider was asked; answers the client's error. */
  beforeDispatch(ctx: ChatContext, err: unknown): DomainError {
    const domain = err instanceof DomainError ? err : new DomainError("internal", "internal error", { cause: err });
    if (!(err instanceof DomainError)) this.deps.log.error({ err, id: ctx.id }, "gateway.chat.failed");
    else this.logUnavailable(ctx, domain, domain.message);
    const outcome = outcomeOf(ctx, {
      status: err instanceof Refused ? "refused" : "error",
      errorCode: domain.code,
      errorMessage: domain.message,
    });
    void this.finish(ctx, outcome, null);
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
    // The record's words, never the client's message: that one can carry the provider's own text.
    if (!cancelled) this.logUnavailable(ctx, error, outcome.errorMessage);
    void this.finish(ctx, outcome, null);
    return { error, outcome };
  }

  /**
   * Every 5xx the chat path answers is logged once, by its id (the response's `x-request-id`): a
   * service Router depends on that failed (`routing_unavailable`), providers that all failed, a stop.
   */
  private logUnavailable(ctx: ChatContext, err: DomainError, reason: string | null): void {
    if (err.status < 500) return;
    this.deps.log.warn({ id: ctx.id, status: err.status, code: err.code, reason }, "gateway.chat.unavailable");
  }

  /** A bug inside dispatch: never a hang, never a lost hold. Answers the client's error. */
  crashed(ctx: ChatContext, err: unknown): DomainError {
    this.deps.log.error({ err, id: ctx.id }, "gateway.chat.failed");
    void this.finish(ctx, outcomeOf(ctx, { status: "error", errorCode: "internal", errorMessage: "internal error" }), null);
    return new DomainError("internal", "internal error");
  }
}
