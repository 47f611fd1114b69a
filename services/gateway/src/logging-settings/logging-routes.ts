import { Router, type Request, type Response } from "express";
import type { Db } from "@router/db";
import { DomainError, invalid } from "@router/errors";
import { parseInput } from "@router/http-kit";
import type { Clock } from "@router/money";
import { z } from "zod";
import type { Manage } from "../auth/management-auth";
import { requirePrincipal } from "../auth/principal";
import { objectBody } from "@router/http-kit";
import { isKeyHash } from "../keys/key-secret";
import { DEFAULT_LOGGING, foreignKeyHashes, loadLogging, saveLogging, type LoggingSettings } from "./logging-store";

const keyHashes = z
  .array(z.string().refine(isKeyHash, "expected the 64-character hex hash of a key"))
  .max(1000)
  .transform((hashes) => [...new Set(hashes)]);

const FIELDS = ["enabled", "key_include", "key_exclude", "retention_days", "locked", "purposes"];
export const putBody = z.object({
  enabled: z.literal(false, { error: "cannot be true in this release: stored content is not offered yet" }).default(false),
  key_include: keyHashes.default([]),
  key_exclude: keyHashes.default([]),
  retention_days: z.number().int().min(90, "must be at least 90").max(3650).default(90),
  locked: z.boolean().default(false),
  purposes: z
    .array(z.enum(["self_access", "rag"]))
    .refine((p) => p.includes("self_access"), "must include self_access")
    .transform((p) => [...new Set(p)])
    .optional(),
});

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
 * Input/output logging settings: read (any role); replace with a management key or a session
 * (never an inference key), Owner or Developer (config:write). While `locked`, only a request that
 * clears the lock may change them.
 */
export function loggingRoutes(deps: {
  db: Db;
  manage: Manage;
  clock: Clock;
  /** Called after a change is stored, before it is answered: this gateway's stored-response policy. */
  onWrite?: (orgId: string) => void;
}): Router {
  const router = Router();

  router.get("/v1/logging", deps.manage("read"), async (_req: Request, res: Response) => {
    res.json({ data: loggingView(await loadLogging(deps.db, requirePrincipal(res).orgId)) });
  });

  router.put("/v1/logging", deps.manage("config:write"), async (req: Request, res: Response) => {
    const { orgId } = requirePrincipal(res);
    const raw = objectBody(req, FIELDS);
    const body = parseInput(putBody, raw);
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
    deps.onWrite?.(orgId);
    res.json({ data: loggingView(saved) });
  });

  return router;
}
