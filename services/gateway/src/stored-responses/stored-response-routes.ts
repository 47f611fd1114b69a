import { Router, type NextFunction, type Request, type RequestHandler, type Response } from "express";
import { DomainError, invalid } from "@router/errors";
import { writeHttpError } from "@router/http-kit";
import type { Logger } from "@router/logging";
import { requireCaller } from "../auth/authenticate";
import { openAiError } from "../ingress/openai-error";
import type { StoredResponses } from "./stored-response-store";

export interface StoredResponseRouteDeps {
  /** Inference-key authentication (sets `res.locals.caller`), as POST /v1/responses takes. */
  authenticate: RequestHandler;
  responses: StoredResponses;
  log: Logger;
}

/** OpenAI's list of input items: newest first by default, as `GET /v1/responses/{id}/input_items` answers. */
function inputItemsPage(input: Record<string, unknown>[], order: unknown): Record<string, unknown> {
  const data = order === "asc" ? input : [...input].reverse();
  return {
    object: "list",
    data,
    first_id: typeof data[0]?.id === "string" ? data[0].id : null,
    last_id: typeof data.at(-1)?.id === "string" ? data.at(-1)?.id : null,
    has_more: false,
  };
}

/**
 * `GET /v1/responses/{id}`, `GET /v1/responses/{id}/input_items` and `DELETE /v1/responses/{id}`,
 * as the OpenAI SDKs call them (`responses.retrieve`, `responses.inputItems.list`,
 * `responses.delete`), with OpenAI's error shape. Scoped to the caller's organisation: another
 * organisation's id, an expired or a deleted one is a 404 like an unknown one.
 */
export function storedResponseRoutes(deps: StoredResponseRouteDeps): Router {
  const router = Router();
  const answer =
    (handle: (orgId: string, id: string, req: Request, res: Response) => Promise<void>) =>
    async (req: Request, res: Response, _next: NextFunction): Promise<void> => {
      try {
        const id = req.params.id;
        if (typeof id !== "string" || id.length > 256) throw invalid("id", "not a response id");
        await handle(requireCaller(res).orgId, id, req, res);
      } catch (err) {
        writeHttpError(req, res, err, deps.log, openAiError);
      }
    };
  const notFound = (id: string) => new DomainError("not_found", `Response with id '${id}' not found.`, { details: { field: "id" } });

  router.get(
    "/v1/responses/:id",
    deps.authenticate,
    answer(async (orgId, id, _req, res) => {
      const stored = await deps.responses.get(orgId, id);
      if (!stored) throw notFound(id);
      res.json(stored.response);
    }),
  );
  router.get(
    "/v1/responses/:id/input_items",
    deps.authenticate,
    answer(async (orgId, id, req, res) => {
      const stored = await deps.responses.get(orgId, id);
      if (!stored) throw notFound(id);
      res.json(inputItemsPage(stored.input, req.query.order));
    }),
  );
  router.delete(
    "/v1/responses/:id",
    deps.authenticate,
    answer(async (orgId, id, _req, res) => {
      if (!(await deps.responses.delete(orgId, id))) throw notFound(id);
      res.json({ id, object: "response", deleted: true });
    }),
  );
  return router;
}
