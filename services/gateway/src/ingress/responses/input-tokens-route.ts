import { invalid } from "@router/errors";
import { writeHttpError } from "@router/http-kit";
import type { Logger } from "@router/logging";
import { Router, type Request, type RequestHandler, type Response } from "express";
import { requireCaller } from "../../auth/authenticate";
import { estimatedInputTokens, TOKEN_COUNT_HEADER } from "../../request-model/token-estimate";
import type { CredentialRateLimit } from "../../rate-limits/rate-limit-middleware";
import type { Ingress } from "../ingress";
import { openAiError } from "../openai-error";

export const INPUT_TOKENS_PATH = "/v1/responses/input_tokens";

/**
 * `POST /v1/responses/input_tokens` (the `openai` SDK's `responses.inputTokens.count`): a Responses
 * body, expanded from stored responses as `POST /v1/responses` expands it, counted. No endpoint in
 * the catalog speaks the Responses API, so no provider is asked: the count is an estimate and says
 * so. Nothing is billed, held or recorded.
 */
export function inputTokensRoutes(deps: { authenticate: RequestHandler; responses: Ingress; limit: CredentialRateLimit; log: Logger }): Router {
  const router = Router();
  router.post(INPUT_TOKENS_PATH, deps.authenticate, async (req: Request, res: Response) => {
    try {
      const caller = requireCaller(res);
      await deps.limit({ id: caller.key.hash, per: "key" }, res);
      const raw: unknown = req.body;
      if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw invalid("body", "expected a JSON object");
      // The count names no model when the caller does not; the Responses schema wants none either.
      const body = deps.responses.expand ? await deps.responses.expand(raw, caller) : raw;
      const { request } = deps.responses.parse(body);
      res.setHeader(TOKEN_COUNT_HEADER, "estimate");
      res.json({ object: "response.input_tokens", input_tokens: await estimatedInputTokens(request) });
    } catch (err) {
      writeHttpError(req, res, err, deps.log, openAiError);
    }
  });
  return router;
}
