import { Router, type RequestHandler } from "express";
import { DomainError, invalid } from "@router/errors";
import type { Caller } from "../auth/caller";
import type { RecentGenerations } from "./recent-generations";

export interface GenerationDeps {
  /** Inference-key authentication (sets `res.locals.caller`). */
  authenticate: RequestHandler;
  recent: RecentGenerations;
}

/**
 * `GET /v1/generation?id=`: answers from the recent generations this gateway just served; any other
 * id falls through (`next()`) to the proxy, which forwards to activity, the owner of the record.
 * Mount before the proxy.
 */
export function generationRoutes(deps: GenerationDeps): Router {
  const router = Router();
  router.get("/v1/generation", deps.authenticate, async (req, res, next) => {
    const id = req.query.id;
    if (typeof id !== "string" || id === "") throw invalid("id", "required: the id of a chat completion");
    if (id.length > 128) throw invalid("id", "not a generation id");
    const caller = res.locals.caller as Caller | undefined;
    if (!caller) throw new DomainError("internal", "route reached without authentication");
    const record = await deps.recent.get(caller.orgId, id);
    if (!record) return next();
    res.json({ data: record });
  });
  return router;
}
