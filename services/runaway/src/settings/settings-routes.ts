import { Router } from "express";
import { requirePermission } from "@router/access";
import type { Db } from "@router/db";
import { invalid } from "@router/errors";
import { identityOf, parseInput } from "@router/http-kit";
import type { Clock } from "@router/money";
import { runaway } from "@router/management-api";
import { getRunawayAction, setRunawayAction } from "./settings-store";

export const SETTINGS_PATH = "/v1/alerts/settings";

const settingsBody = runaway.runawaySettingsBody;

/** `GET` (any role) and `PUT` (`config:write`) of what a runaway flag does to a key. */
export function settingsRoutes(deps: { db: Db; clock: Clock }): Router {
  const router = Router();

  router.get(SETTINGS_PATH, async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "read");
    res.json({ data: { runaway_action: await getRunawayAction(deps.db, identity.orgId) } });
  });

  router.put(SETTINGS_PATH, async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "config:write");
    const raw: unknown = req.body ?? {};
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw invalid("body", "expected a JSON object");
    const body = parseInput(settingsBody, raw);
    await setRunawayAction(deps.db, identity.orgId, body.runaway_action, deps.clock.now());
    res.json({ data: { runaway_action: body.runaway_action } });
  });

  return router;
}
