import { performance } from "node:perf_hooks";
import { DomainError, invalid } from "@router/errors";
import { writeHttpError } from "@router/http-kit";
import type { Logger } from "@router/logging";
import { Router, type NextFunction, type Request, type Response } from "express";
import { requireCaller, type Authenticate } from "../../auth/authenticate";
import { newChatContext } from "../../chat/chat-context";
import type { ChatDeps } from "../../chat/chat-deps";
import type { ChatRequest } from "@router/chat-request";
import { readRouterHeaders } from "../../request-model/router-headers";
import { estimatedInputTokens, TOKEN_COUNT_HEADER } from "../../request-model/token-estimate";
import type { UpstreamClient } from "../../dispatch/upstream-client";
import { upstreamTarget } from "../../dispatch/upstream-target";
import { anthropicNativeBody } from "@router/providers";
import { anthropicHeaders, messagesUrl } from "@router/providers";
import type { UpstreamTarget } from "@router/providers";
import type { CredentialRateLimit } from "../../rate-limits/rate-limit-middleware";
import { planRequestOf } from "../../routing/plan-request";
import { anthropicMessagesIngress, MESSAGES_PATH } from "./index";
import { parseMessages } from "@router/inference-api";

export const COUNT_TOKENS_PATH = `${MESSAGES_PATH}/count_tokens`;

/** What Anthropic's count takes of a Messages body; generation settings (max_tokens, stream, ...) are refused there. */
const COUNTED_FIELDS = ["model", "messages", "system", "tools", "tool_choice", "thinking", "mcp_servers", "context_management", "output_config", "output_format"];

/**
 * `POST /v1/messages/count_tokens` (Anthropic's token count, which Claude Code's `/context` asks
 * for): the model is routed as a completion would be; when it would be served by Anthropic, the
 * count is Anthropic's own, asked with the organisation's credential; otherwise, or when Anthropic
 * cannot answer, it is estimated with a tokenizer and marked as such. Nothing is billed or held.
 */
export function countTokensRoutes(deps: {
  authenticate: Authenticate;
  chat: Pick<ChatDeps, "credentials" | "routing" | "clock" | "providerBaseUrls">;
  client: UpstreamClient;
  limit: CredentialRateLimit;
  openCircuits: () => string[];
  log: Logger;
}): Router {
  const router = Router();
  const anthropicNames = (req: Request, _res: Response, next: NextFunction) => {
    anthropicMessagesIngress.prepare?.(req);
    next();
  };
  router.post(COUNT_TOKENS_PATH, anthropicNames, deps.authenticate({ allow: ["inference"] }), async (req: Request, res: Response) => {
    try {
      const caller = requireCaller(res);
      await deps.limit({ id: caller.key.hash, per: "key" }, res);
      const body: unknown = req.body;
      if (body === null || typeof body !== "object" || Array.isArray(body)) throw invalid("body", "expected a JSON object");
      // The count takes no max_tokens; the Messages schema wants one, and it counts for nothing here.
      const { request, native } = parseMessages({ max_tokens: 1, ...(body as Record<string, unknown>) });
      const ctx = newChatContext(caller, readRouterHeaders(req), request, deps.chat.clock.now(), performance.now(), anthropicMessagesIngress);
      const credentials = await deps.chat.credentials.enabledFor(caller.orgId);
      const plan = await deps.chat.routing.plan(planRequestOf(ctx, credentials, deps.openCircuits()));
      if (plan.refusal) throw new DomainError(plan.refusal.code as DomainError["code"], plan.refusal.message, { status: plan.refusal.httpStatus || 404 });
      const first = plan.cascade[0];
      if (!first) throw new DomainError("no_route", "no endpoint can serve this model", { status: 404 });
      // Only Anthropic's own API is asked: the clouds that serve Claude (Bedrock, Vertex AI) count
      // elsewhere and sign differently, and the estimate serves them.
      const credential = first.apiFamily === "anthropic" && first.providerSlug === "anthropic" ? credentials.find((c) => c.providerSlug === first.providerSlug && deps.chat.credentials.allows(c, first.modelId)) : undefined;
      if (credential) {
        const target = upstreamTarget(first, credential, deps.chat.providerBaseUrls, ctx.headers.vendorBeta);
        const counted = await providerCount(deps.client, native.body, request, target, deps.log);
        if (counted !== null) {
          res.setHeader(TOKEN_COUNT_HEADER, "provider");
          res.json({ input_tokens: counted });
          return;
        }
      }
      res.setHeader(TOKEN_COUNT_HEADER, "estimate");
      res.json({ input_tokens: await estimatedInputTokens(request), estimate: true });
    } catch (err) {
      writeHttpError(req, res, err, deps.log, anthropicMessagesIngress.errorBody);
    }
  });
  return router;
}

/** Anthropic's own count, or null when it could not be had (the caller then estimates). */
async function providerCount(client: UpstreamClient, native: Record<string, unknown>, request: ChatRequest, target: UpstreamTarget, log: Logger): Promise<number | null> {
  // The same body a completion would send (system messages folded, thinking fitted), cut to what the count takes.
  const built = anthropicNativeBody(native, request, target, false);
  const counted: Record<string, unknown> = {};
  for (const field of COUNTED_FIELDS) if (built[field] !== undefined) counted[field] = built[field];
  const http = { url: messagesUrl(target, "/count_tokens"), headers: anthropicHeaders(target, false), body: JSON.stringify(counted) };
  try {
    const res = await client.sendWhole(http, AbortSignal.timeout(10_000));
    const n = (JSON.parse(res.text) as { input_tokens?: unknown }).input_tokens;
    if (res.statusCode === 200 && typeof n === "number") return n;
    log.warn({ status: res.statusCode, provider: target.providerSlug }, "gateway.count_tokens.provider_refused");
  } catch (err) {
    log.warn({ err, provider: target.providerSlug }, "gateway.count_tokens.provider_failed");
  }
  return null;
}
