import type { Db } from "@router/db";
import { LoadingCache } from "@router/loading-cache";
import type { Clock } from "@router/money";
import { Router } from "express";
import { uptimeOf, uptimeWindow, type Uptime } from "./uptime";
import { probeDays } from "./uptime-store";

/** The figure is cached a minute: probes arrive once a minute per region anyway. */
const UPTIME_CACHE_MS = 60_000;

/** `GET /v1/status/uptime` (public; the gateway limits it per address): the last 90 UTC days of probes of /health. */
export function uptimeRoute(deps: { db: Db; clock: Clock }): Router {
  const cache = new LoadingCache<Uptime>(
    async () => {
      const now = deps.clock.now();
      const { from, to } = uptimeWindow(now);
      return uptimeOf(await probeDays(deps.db, from, to), now);
    },
    deps.clock,
    { ttlMs: UPTIME_CACHE_MS, maxEntries: 1 },
  );
  const router = Router();
  router.get("/v1/status/uptime", async (_req, res) => {
    res.json({ data: await cache.get("uptime") });
  });
  return router;
}
