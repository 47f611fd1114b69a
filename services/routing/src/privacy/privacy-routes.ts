import { Router, type Request } from "express";
import { requirePermission } from "@router/access";
import type { Db } from "@router/db";
import { identityOf, requireIdentity, type IdentityPublicKeys } from "@router/http-kit";
import type { Clock } from "@router/money";
import type { CatalogCache } from "../catalog/catalog-cache";
import type { PrivacyPolicies } from "./privacy-policies";
import { eligibilityOf, modelGroups, policyJson, readPolicyBody, type PrivacyPolicy } from "./privacy-policy";
import { savePolicy } from "./privacy-store";

export interface PrivacyRoutesDeps {
  db: Db;
  catalog: CatalogCache;
  policies: PrivacyPolicies;
  clock: Clock;
  identityKeys: IdentityPublicKeys;
}

/**
 * The privacy policy of the signed identity's organisation: read by any role, set by owner and
 * admin (`org:write`), previewed by the same roles without saving anything.
 */
export function privacyRoutes(deps: PrivacyRoutesDeps): Router {
  const router = Router();
  router.use("/v1/privacy", requireIdentity(deps.identityKeys));
  const orgOf = (req: Request, permission: "read" | "org:write") => {
    const identity = identityOf(req);
    requirePermission(identity, permission);
    return identity.orgId;
  };
  const eligibility = (p: PrivacyPolicy) => {
    const { available, unavailable } = eligibilityOf(p, deps.catalog.snapshot());
    return { available, unavailable };
  };

  router.get("/v1/privacy", (req, res) => {
    const policy = deps.policies.get(orgOf(req, "read"));
    const catalog = deps.catalog.snapshot();
    res.json({
      data: {
        policy: policyJson(policy),
        eligibility: eligibility(policy),
        regions: [...catalog.declaredRegions()].sort(),
        groups: [...modelGroups(catalog)].map(([group, models]) => ({ group, models })),
      },
    });
  });

  router.put("/v1/privacy", async (req, res) => {
    const orgId = orgOf(req, "org:write");
    const policy = readPolicyBody(req.body, deps.catalog.snapshot());
    await savePolicy(deps.db, orgId, policy, deps.clock.now());
    await deps.policies.changed(orgId, policy);
    res.json({ data: { policy: policyJson(policy), eligibility: eligibility(policy) } });
  });

  router.post("/v1/privacy/preview", (req, res) => {
    orgOf(req, "org:write");
    res.json({ data: eligibilityOf(readPolicyBody(req.body, deps.catalog.snapshot()), deps.catalog.snapshot()) });
  });

  return router;
}
