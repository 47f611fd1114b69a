import type { ServerResponse } from "node:http";
import type { DomainError } from "@router/errors";
import { errorBody, writeJson } from "@router/http-kit";
import type { AttemptFailure } from "../dispatch/attempt-failure";
import type { CascadeResult } from "../dispatch/types";
import type { ChatContext } from "./chat-context";
import { UPSTREAM_OVERLOADED } from "./dispatch-error";
import { interruptionOf, type Finishing } from "./finishing";
import { requestMetadata } from "./router-metadata";

/**
 * A non-stream error: the envelope in the ingress's format (an overloaded provider at the format's own status),
 * `router_metadata` when asked, and a provider's `Retry-After` passed on with its 429 or its overload.
 */
export function sendChatError(
  res: ServerResponse,
  err: DomainError,
  ctx: ChatContext,
  result: CascadeResult | null,
  failure: AttemptFailure | null,
): void {
  const overloaded = err.code === UPSTREAM_OVERLOADED;
  const status = overloaded ? (ctx.ingress.overloadedStatus ?? err.status) : err.status;
  const body = ctx.ingress.errorBody(errorBody(status, err.code, err.message, err.details).error);
  const meta = requestMetadata(ctx, result, null);
  if (meta) body.router_metadata = meta;
  if (failure?.opts.retryAfter && (err.status === 429 || overloaded)) res.setHeader("retry-after", failure.opts.retryAfter);
  writeJson(res, status, body);
}

/** Nothing was served (every candidate failed, the client left or the gateway stopped): finished, and answered unless the client left. */
export function sendUnserved(res: ServerResponse, finishing: Finishing, ctx: ChatContext, result: CascadeResult, signal: AbortSignal): void {
  const interrupted = interruptionOf(signal);
  const { error } = finishing.unserved(ctx, result, interrupted);
  if (interrupted !== "cancelled") sendChatError(res, error, ctx, result, interrupted === "shutdown" ? null : result.failure);
}
