import { Router, type Request, type Response } from "express";
import { requirePermission } from "@router/access";
import type { Db } from "@router/db";
import { DomainError, invalid } from "@router/errors";
import { identityOf, objectBody, parseInput } from "@router/http-kit";
import { console as consoleApi } from "@router/management-api";
import type { Clock } from "@router/money";
import { foreignKeyHashes } from "../keys/key-store";
import { DEFAULT_LOGGING, loadLogging, saveLogging, type LoggingSettings } from "./logging-store";

function loggingView(s: LoggingSettings) {
  return {
    enabled: s.enabled,
    key_include: s.keyInclude,
    key_exclude: s.keyExclude,
    retention_days: s.retentionDays,
    locked: s.locked,
    purposes: s.purposes,
    consented_at: s.consentedAt?.toISOString() ?? null,
  };
}

/**
 * Input/output logging settings: read (any role); replace (`config:write`: a management key or a
 * session, never an inference key). While `locked`, only a request that clears the lock may change
 * them. Every key hash named must be a key of the organisation. The gateway forwards these with the
 * caller's signed identity and drops its own copy of the organisation's exclusions once this answered.
 */
export function loggingRoutes(deps: { db: Db; clock: Clock }): Router {
  const router = Router();

  router.get("/v1/logging", async (req: Request, res: Response) => {
    const identity = identityOf(req);
    requirePermission(identity, "read");
    res.json({ data: loggingView(await loadLogging(deps.db, identity.orgId)) });
  });

  router.put("/v1/logging", async (req: Request, res: Response) => {
    const identity = identityOf(req);
    requirePermission(identity, "config:write");
    const orgId = identity.orgId;
    const raw = objectBody(req, consoleApi.LOGGING_FIELDS);
    const body = parseInput(consoleApi.loggingPutBody, raw);
    for (const field of ["key_include", "key_exclude"] as const) {
      const foreign = await foreignKeyHashes(deps.db, orgId, body[field]);
      if (foreign.length > 0) throw invalid(field, `not a key of this organisation: ${foreign[0]}`);
    }
    const saved = await deps.db.tx(async (q) => {
      const now = deps.clock.now();
      const current = await loadLogging(q, orgId, { forUpdate: true });
      // Only an explicit `locked: false` clears a lock; an omitted field would otherwise clear it by default.
      if (current.locked && raw.locked !== false) {
        throw new DomainError("conflict", "logging settings are locked; send locked: false to unlock them", { details: { field: "locked" } });
      }
      const next: LoggingSettings = {
        enabled: body.enabled,
        keyInclude: body.key_include,
        keyExclude: body.key_exclude,
        retentionDays: body.retention_days,
        locked: body.locked,
        purposes: body.purposes ?? DEFAULT_LOGGING.purposes,
        // Sending purposes is the consent; otherwise the earlier consent stands.
        consentedAt: body.purposes ? now : current.consentedAt,
      };
      await saveLogging(q, orgId, next, now);
      return next;
    });
    res.json({ data: loggingView(saved) });
  });

  return router;
}
