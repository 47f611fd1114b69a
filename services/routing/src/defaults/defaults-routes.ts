import { Router } from "express";
import type { Db } from "@router/db";
import { identityOf, requireIdentity, type IdentityPublicKeys } from "@router/http-kit";
import type { Clock } from "@router/money";
import { requirePermission } from "@router/access";
import type { CatalogCache } from "../catalog/catalog-cache";
import type { DefaultsCache } from "./defaults-cache";
import { loadDefaults, saveDefaults } from "./defaults-store";
import { defaultsJson, parseDefaults } from "./routing-defaults";

export interface DefaultsRoutesDeps {
  db: Db;
  catalog: CatalogCache;
  defaults: DefaultsCache;
  clock: Clock;
  /** Verifies the gateway-signed identity (`x-router-identity`). */
  identityKeys: IdentityPublicKeys;
}

/** `GET` and `PUT /v1/routing/defaults`, scoped to the signed identity's organisation. */
export function defaultsRoutes(deps: DefaultsRoutesDeps): Router {
  const router = Router();
  router
    .route("/v1/routing/defaults")
    .all(requireIdentity(deps.identityKeys))
    // Read from the store, not the cache: a reader expects what was last saved on any replica.
    .get(async (req, res) => {
      const { orgId } = identityOf(req);
      requirePermission(identityOf(req), "read");
      res.json({ data: defaultsJson(await loadDefaults(deps.db, orgId)) });
    })
    .put(async (req, res) => {
      const { orgId } = identityOf(req);
      requirePermission(identityOf(req), "org:write");
      const next = parseDefaults(req.body, deps.catalog.snapshot(), deps.clock.now());
      const saved = await saveDefaults(deps.db, orgId, next);
      await deps.defaults.put(orgId, saved);
      res.json({ data: defaultsJson(saved) });
    });
  return router;
}
