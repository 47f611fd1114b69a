import { Router } from "express";
import { requirePermission } from "@router/access";
import type { Db } from "@router/db";
import { invalid } from "@router/errors";
import { identityOf, parseInput } from "@router/http-kit";
import type { Clock } from "@router/money";
import { brandingBody } from "./branding-input";
import { brandingOf } from "./branding";
import { readBranding, saveBranding } from "./branding-store";

export function brandingRoutes(deps: { db: Db; clock: Clock }): Router {
  const router = Router();

  router.get("/v1/reports/branding", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "read");
    res.json({ data: brandingOf(identity, await readBranding(deps.db, identity.orgId)) });
  });

  router.put("/v1/reports/branding", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "config:write");
    const body: unknown = req.body ?? {};
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalid("body", "must be a JSON object");
    const fields = parseInput(brandingBody, body);
    const saved = await saveBranding(deps.db, identity.orgId, fields, identity, deps.clock.now());
    res.json({ data: brandingOf(identity, saved) });
  });

  return router;
}
