import type { ServerResponse } from "node:http";
import type { DomainError } from "@router/errors";
import { errorBody, writeJson } from "@router/http-kit";
import type { AttemptFailure } from "../dispatch/attempt-failure";
import type { CompletionResult } from "../dispatch/types";
import type { ChatContext } from "./chat-context";
import { requestMetadata } from "./router-metadata";

/**
 * A non-stream error: the envelope in the ingress's format, `router_metadata` when asked, and a provider's `Retry-After`
 * passed on with its 429.
 */
export function sendChatError(
  res: ServerResponse,
  err: DomainError,
  ctx: ChatContext,
  result: CompletionResult | null,
  failure: AttemptFailure | null,
): void {
  const body = ctx.ingress.errorBody(errorBody(err.status, err.code, err.message, err.details).error);
  const meta = requestMetadata(ctx, result, null);
  if (meta) body.router_metadata = meta;
  if (failure?.opts.retryAfter && err.status === 429) res.setHeader("retry-after", failure.opts.retryAfter);
  writeJson(res, err.status, body);
}
