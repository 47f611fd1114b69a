import { Router } from "express";
import { requirePermission } from "@router/access";
import type { Db } from "@router/db";
import { DomainError, notFound } from "@router/errors";
import { identityOf } from "@router/http-kit";
import { findRequest } from "../requests/request-queries";

/**
 * The one read path for stored prompts and completions (`GET /v1/generation/{id}/content`),
 * management key or dashboard session only (the gateway never forwards an inference key here, and
 * `requirePermission` refuses one again).
 *
 * Content is stored only for a generation made while the organisation had input/output logging on,
 * and this release cannot turn logging on (the gateway refuses `enabled: true`), so no content is
 * ever stored: an existing generation of the caller's organisation answers 404 with
 * `details.reason: "not_logged"`. When a later release stores content (sealed, deleted past the
 * retention), this route answers `{"data": {"request_id", "content"}}` for a logged generation.
 * Another organisation's generation, or an unknown id, is a plain 404.
 */
export function contentRoutes(deps: { db: Db }): Router {
  const router = Router();

  router.get("/v1/generation/:id/content", async (req) => {
    const identity = identityOf(req);
    requirePermission(identity, "usage:read");
    const generation = await findRequest(deps.db, identity.orgId, req.params.id);
    if (!generation) throw notFound("generation");
    throw new DomainError("not_found", `no stored content for ${generation.id}: input/output logging was off when it was made`, {
      details: { reason: "not_logged" },
    });
  });

  return router;
}
