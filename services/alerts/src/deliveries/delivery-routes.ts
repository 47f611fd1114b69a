import { Router } from "express";
import { requirePermission } from "@router/access";
import type { Db } from "@router/db";
import { identityOf } from "@router/http-kit";
import type { Clock } from "@router/money";
import { recentDeliveries, renderDelivery } from "./delivery-store";

/** The delivery log: the organisation's last 50 attempts, newest first, any role. */
export function deliveryRoutes(deps: { db: Db; clock: Clock }): Router {
  const router = Router();
  router.get("/v1/alerts/deliveries", async (req, res) => {
    const identity = identityOf(req);
    requirePermission(identity, "read");
    const rows = await recentDeliveries(deps.db, identity.orgId, deps.clock.now());
    res.json({ data: rows.map(renderDelivery), next_cursor: null });
  });
  return router;
}
