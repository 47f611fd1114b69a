import { Router } from "express";
import { requirePermission } from "@router/access";
import type { Db } from "@router/db";
import { identityOf } from "@router/http-kit";
import { toUsd, type Clock } from "@router/money";
import { FLAG_RETENTION_MS, listFlags, type Flag } from "./flag-store";

export const FLAGS_PATH = "/v1/alerts/runaway";
/** The product's bound on the list. */
export const FLAGS_LISTED = 100;

/**
 * A flag as the API shows it, USD at the edge. `key_paused` is not here: whether a key is paused
 * right now is the gateway's knowledge, and the gateway adds it to each row it forwards.
 */
export function flagRow(f: Flag) {
  return {
    id: f.id,
    subject_kind: f.subjectKind,
    subject: f.subject,
    key_name: f.keyName,
    key_hash: f.keyHash,
    action: f.action,
    kind: f.kind,
    window_start: f.windowStart.toISOString(),
    window_end: f.windowEnd.toISOString(),
    spend: toUsd(f.spendNanos),
    usual_spend: toUsd(f.usualSpendNanos),
    requests: Number(f.requests),
    usual_requests: f.usualRequests,
    created_at: f.createdAt.toISOString(),
  };
}

/** `GET /v1/alerts/runaway`: the organisation's flags of the last 30 days, at most 100, newest first. */
export function flagRoutes(deps: { db: Db; clock: Clock }): Router {
  const router = Router();
  router.get(FLAGS_PATH, async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "read");
    const since = new Date(deps.clock.now().getTime() - FLAG_RETENTION_MS);
    const flags = await listFlags(deps.db, identity.orgId, since, FLAGS_LISTED);
    res.json({ data: flags.map(flagRow), next_cursor: null });
  });
  return router;
}
